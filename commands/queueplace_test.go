package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// Four teams share one two-GPU kiln node; each may hold it whole, so only the node makes them wait.
const kilnPolicy = "organization: Fenwick Ceramics\ncurrency: GBP\ntimezone: Europe/London\nclasses:\n" +
	"  - {name: kiln, sku: L40S, price_per_gpu_hour: 1.5, max_gpus: 2, max_duration: 8h}\n" +
	"default_quota: {gpus: {kiln: 2}, gpu_hours_per_week: 200}\nteams:\n" +
	"  - {name: ash, idp_groups: [g-ash]}\n  - {name: birch, idp_groups: [g-birch]}\n" +
	"  - {name: cedar, idp_groups: [g-cedar]}\n  - {name: dune, idp_groups: [g-dune]}\n" +
	"approvals: {timeout: 24h, fallback_approvers: [ops@fenwick.example]}\nbackend: sim\ndirectory:\n" +
	"  - {user: ada@fenwick.example, groups: [g-ash]}\n  - {user: bo@fenwick.example, groups: [g-birch]}\n" +
	"  - {user: cy@fenwick.example, groups: [g-cedar]}\n  - {user: dee@fenwick.example, groups: [g-dune]}\n" +
	"  - {user: ops@fenwick.example, groups: [ops]}\n" +
	"sim:\n  nodes:\n    - {name: k1, count: 1, class: kiln, gpus: 2}\n"

func kilnHarness(t *testing.T) *harness {
	t.Helper()
	file := filepath.Join(t.TempDir(), "fenwick.yaml")
	if err := os.WriteFile(file, []byte(kilnPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	return newHarnessOn(t, file)
}

// leaseCardField is the value of a field of a lease's card in a reply, "" when it has none.
func leaseCardField(r bot.Reply, lease, label string) string {
	for _, s := range r.Sections {
		if s.Title != lease {
			continue
		}
		for _, f := range s.Fields {
			if f.Label == label {
				return f.Value
			}
		}
	}
	return ""
}

// A queued lease says where it stands in its class's queue: its reply when it is queued, its
// /gpu status and its card in /gpu list, counted afresh each time, so that it moves up as leases
// ahead of it are cancelled or start. A lease that runs says no place.
func TestAQueuedLeaseSaysItsPlaceInItsClassQueue(t *testing.T) {
	h := kilnHarness(t)
	held := leaseIn(t, mustOK(t, h.say("ada@fenwick.example", "/gpu request 2 kiln for 2h")).Text).String()
	ids := map[string]string{}
	for i, who := range []string{"bo", "cy", "dee"} {
		r := mustOK(t, h.say(who+"@fenwick.example", "/gpu request 2 kiln for 1h"))
		ids[who] = leaseIn(t, r.Text).String()
		want := []string{"1st", "2nd", "3rd"}[i] + " in line for kiln."
		if !strings.Contains(r.Text, ids[who]+" is queued: ") || !strings.Contains(r.Text, ". "+want+" Predicted wait: ") {
			t.Errorf("%s's request: %q; want it queued, %q before its predicted wait", who, r.Text, want)
		}
	}
	status := func(who, want string) {
		t.Helper()
		s := mustOK(t, h.say(who+"@fenwick.example", "/gpu status "+ids[who])).Text
		if !strings.Contains(s, ". "+want+". Predicted wait: ") {
			t.Errorf("/gpu status %s: %q; want %q", ids[who], s, want)
		}
		l := mustOK(t, h.say(who+"@fenwick.example", "/gpu list"))
		if got := leaseCardField(l, ids[who], "Queue"); got != want {
			t.Errorf("/gpu list of %s: its card says %q in the queue; want %q", who, got, want)
		}
	}
	status("dee", "3rd in line for kiln")
	status("cy", "2nd in line for kiln")

	mustOK(t, h.say("bo@fenwick.example", "/gpu cancel "+ids["bo"]))
	status("cy", "1st in line for kiln")
	status("dee", "2nd in line for kiln")

	mustOK(t, h.say("ada@fenwick.example", "/gpu release "+held))
	status("dee", "1st in line for kiln")
	s := mustOK(t, h.say("cy@fenwick.example", "/gpu status "+ids["cy"]))
	if strings.Contains(s.Text, "in line") || leaseCardField(s, ids["cy"], "Queue") != "" {
		t.Errorf("/gpu status %s once it started: %q; want no place in a queue", ids["cy"], s.Text)
	}
}

// Ordinals read as English writes them, the teens included.
func TestQueuePlacesReadAsOrdinals(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 101: "101st", 111: "111th"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q; want %q", n, got, want)
		}
	}
}

// A lease whose job waits in the scheduler's own queue (Kubernetes cannot place its pod) says no
// place in line: only the scheduler knows its order.
func TestALeaseTheSchedulerHoldsSaysNoPlaceInLine(t *testing.T) {
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", append(borealisNodes(), borealisClaims()...)...)
	k.reconcile()
	const pim, ns = "pim@borealis.example", "qm-speech"
	id := leaseIn(t, k.say(pim, "/gpu request 1 slice 1h").Text)
	l, _ := k.svc.Get(context.Background(), id)
	job := l.Ref[strings.LastIndex(l.Ref, "/")+1:]
	k.addPod(ns, job, job+"-a", podUnschedulable("0/3 nodes are available: 1 Insufficient nvidia.com/mig-2g.20gb."))
	k.reconcile()
	s := k.say(pim, "/gpu status "+id.String())
	if !strings.Contains(s.Text, ": queued") {
		t.Fatalf("/gpu status %s: %q; want it queued", id, s.Text)
	}
	if strings.Contains(s.Text, "in line") || leaseCardField(s, id.String(), "Queue") != "" {
		t.Errorf("/gpu status %s: %q; want no place in line while the scheduler holds it", id, s.Text)
	}
	if c := leaseCardField(k.say(pim, "/gpu list"), id.String(), "Queue"); c != "" {
		t.Errorf("/gpu list: its card says %q; want no place in line", c)
	}
}
