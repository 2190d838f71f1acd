package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
)

// labPolicy is a small installation unlike the example: a notebook class with a 2h limit and a
// 5 minute idle timeout, an exclusive class, teams whose budget owners differ, approvals that
// time out after 6 hours and Berlin time.
const labPolicy = `organization: Lab Ümlaut
currency: EUR
timezone: Europe/Berlin
classes:
  - name: notebook
    description: Shared A10 notebooks
    sku: A10
    gpu_memory_gib: 24
    price_per_gpu_hour: 0.50
    isolation: shared
    max_gpus: 2
    max_duration: 2h
    idle_timeout: 5m
    idle_grace: 3m
    capacity_share: 0.5
    slurm: {partition: nb, gres: "gpu:a10"}
  - name: big-a100
    description: Exclusive A100 nodes
    sku: A100
    gpu_memory_gib: 80
    price_per_gpu_hour: 2.00
    isolation: exclusive
    max_gpus: 4
    max_duration: 12h
    idle_timeout: 1h
    idle_grace: 15m
    slurm: {partition: big, gres: "gpu:a100"}
default_quota: {gpus: {notebook: 1, big-a100: 0}, gpu_hours_per_week: 10}
teams:
  - name: sprache-und-toene
    idp_groups: [g-sprache]
    budget_owners: [jürgen@lab.example]
    channel: "#sprache"
    quota: {gpus: {notebook: 2, big-a100: 4}, gpu_hours_per_week: 200}
    data_classes: [public]
  - name: robotik
    idp_groups: [g-robo]
    budget_owners: [olga@lab.example]
    channel: "#robo"
    quota: {gpus: {notebook: 2, big-a100: 4}, gpu_hours_per_week: 200}
    data_classes: [public]
exceptions:
  - name: too-long
    when: request.duration > class.max_duration
    why: Longer than the class allows
  - name: too-many
    when: request.gpus > class.max_gpus
    why: More GPUs than the class allows
approvals:
  timeout: 6h
  self_approval: false
  fallback_approvers: [ops@lab.example]
  step_up: 12h
reports:
  showback: {schedule: "MON 09:00", channel: "#showback"}
backend: sim
directory:
  - {user: anna@lab.example, groups: [g-sprache]}
  - {user: ben@lab.example, groups: [g-sprache]}
  - {user: jürgen@lab.example, groups: [g-sprache]}
  - {user: ivan@lab.example, groups: [g-robo]}
  - {user: olga@lab.example, groups: [g-robo]}
  - {user: ops@lab.example, groups: [platform]}
sim:
  nodes:
    - {name: a10, count: 1, class: notebook, gpus: 2, nvlink_islands: 2}
    - {name: a100, count: 1, class: big-a100, gpus: 4, nvlink_islands: 1}
`

func newLabHarness(t *testing.T) *harness {
	t.Helper()
	f := filepath.Join(t.TempDir(), "lab.yaml")
	if err := os.WriteFile(f, []byte(labPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	return newHarnessOn(t, f)
}

// A lease that still waits for approval, or has ended, cannot be extended; the refusal says
// what to do instead and its example is that command, for this lease.
func TestExtendRefusalSaysWhatWorksInstead(t *testing.T) {
	h := newLabHarness(t)
	pending := leaseIn(t, mustOK(t, h.say("anna@lab.example", "/gpu request 1 notebook for 3h")).Text)
	r := h.say("anna@lab.example", "/gpu extend "+pending.String()+" 1h")
	if !r.Error || !strings.Contains(r.Text, pending.String()+" still waits for approval") ||
		strings.Contains(r.Text, "new lease") || strings.Contains(r.Text, "L-42") ||
		!strings.Contains(r.Text, "Example: /gpu status "+pending.String()) {
		t.Errorf("extending a request that waits for approval: %q", r.Text)
	}

	ended := leaseIn(t, mustOK(t, h.say("anna@lab.example", "/gpu request 1 notebook for 90m")).Text)
	mustOK(t, h.say("anna@lab.example", "/gpu release "+ended.String()))
	r = h.say("anna@lab.example", "/gpu extend "+ended.String()+" 1h")
	if !r.Error || !strings.Contains(r.Text, ended.String()+" is released") ||
		!strings.HasSuffix(r.Text, "Example: /gpu request 1 notebook for 1h30m") {
		t.Errorf("extending a released lease: %q", r.Text)
	}
}

// An extension that waits for approval when its lease ends is withdrawn, and its requester is
// told so, not only the approvers.
func TestPendingExtensionWithdrawnTellsTheRequester(t *testing.T) {
	h := newLabHarness(t)
	id := leaseIn(t, mustOK(t, h.say("anna@lab.example", "/gpu request 1 notebook for 2h")).Text)
	ext := extensionIn(t, mustOK(t, h.say("anna@lab.example", "/gpu extend "+id.String()+" 1h")).Text)
	if ext == id {
		t.Fatalf("extension beyond 2h did not wait for approval")
	}
	h.notices("anna@lab.example")
	h.advance(2*time.Hour + time.Minute)
	got := texts(h.notices("anna@lab.example"))
	want := ext.String() + ", your request to extend " + id.String() + " by 1h, was withdrawn: " + id.String() + " expired before a budget owner decided."
	if !strings.Contains(got, want) {
		t.Errorf("anna was told:\n%s\nwant a message with %q", got, want)
	}
}

// Approving an extension whose lease was released a moment before tells the approver and the
// requester that nothing was extended, not that it was approved and is cancelled.
func TestApprovingAnExtensionOfAnEndedLease(t *testing.T) {
	h := newLabHarness(t)
	id := leaseIn(t, mustOK(t, h.say("anna@lab.example", "/gpu request 1 notebook for 2h")).Text)
	ext := extensionIn(t, mustOK(t, h.say("anna@lab.example", "/gpu extend "+id.String()+" 1h")).Text)
	mustOK(t, h.say("anna@lab.example", "/gpu release "+id.String()))
	h.notices("anna@lab.example")
	r := h.say("jürgen@lab.example", "/gpu approve "+ext.String())
	got := texts(h.notices("anna@lab.example"))
	if !r.Error || !strings.HasPrefix(r.Text, ext.String()+" was withdrawn ("+id.String()+" was released before a budget owner decided) and no longer waits for a decision.") {
		t.Errorf("the approver was told %q", r.Text)
	}
	if want := ext.String() + ", your request to extend " + id.String() + " by 1h, was withdrawn: " + id.String() + " was released before a budget owner decided."; got != want+"\n---\n" {
		t.Errorf("anna was told %q, want %q", got, want)
	}
	if l := h.lease(id); l.State != qm.Released || l.Duration != 2*time.Hour {
		t.Errorf("%s is %s for %s after the late approval", id, l.State, l.Duration)
	}
}

// extensionIn is the extension request named in an extend reply ("… waits for approval as L-2").
func extensionIn(t *testing.T, text string) qm.LeaseID {
	t.Helper()
	_, after, ok := strings.Cut(text, " as L-")
	if !ok {
		t.Fatalf("no extension request in %q", text)
	}
	return leaseIn(t, "L-"+after)
}

// The idle warning says for how long the GPUs were idle, when the lease will be reclaimed, in the
// policy's time zone, and the command that keeps it; the reclaim comes then, not before, and
// activity after the warning calls it off.
func TestIdleWarningSaysWhenAndHowToKeep(t *testing.T) {
	h := newLabHarness(t)
	id := leaseIn(t, mustOK(t, h.say("anna@lab.example", "/gpu request 1 notebook for 2h")).Text)
	h.notices("anna@lab.example")
	h.sim.SetUtilization(h.lease(id), 0)
	h.advance(5*time.Minute + 10*time.Second) // idle_timeout 5m
	warned := h.notices("anna@lab.example")
	want := id.String() + " has shown no GPU activity for 5m; it will be reclaimed at Mon 30 Nov 16:08 CET (in 3m) unless you keep it with /gpu keep " + id.String() + "."
	if len(warned) != 1 || warned[0].Text != want {
		t.Fatalf("the idle warning: %q\nwant %q", texts(warned), want)
	}
	h.advance(2*time.Minute + 40*time.Second)
	if l := h.lease(id); l.State != qm.IdleWarned {
		t.Fatalf("10s before the stated time the lease is %s", l.State)
	}
	h.sim.SetUtilization(h.lease(id), 80)
	h.advance(time.Minute)
	if l := h.lease(id); l.State != qm.Active {
		t.Errorf("busy again after the warning, the lease is %s", l.State)
	}
	// The warning named a time of reclaim; its owner is told that it no longer holds.
	want = id.String() + " is busy again, so it will not be reclaimed; it runs until Mon 30 Nov 18:00 CET (in 1h52m)."
	if told := posted(h.notices("anna@lab.example")); len(told) != 1 || told[0].Text != want {
		t.Errorf("busy again after the warning, anna was told %q\nwant %q", texts(told), want)
	}
}

// An idle warning's reclaim that moved because the lease's telemetry went missing in the grace:
// its owner reads why it did not come at the time the warning named, the new time in the
// policy's time zone and how to keep the lease; or, when the new time would fall after the lease's
// end, that it runs until then.
func TestMovedReclaimSaysTheNewTimeAndHowToKeep(t *testing.T) {
	h := newLabHarness(t)
	id := leaseIn(t, mustOK(t, h.say("anna@lab.example", "/gpu request 1 notebook for 2h")).Text)
	l := *h.lease(id)
	l.State, l.WarnedAt = qm.IdleWarned, h.svc.Clock.Now().Add(10*time.Minute) // the agent came back then
	rs := h.bot.RenderNotice(context.Background(), qm.Notice{Kind: qm.NoticeReclaimMoved, To: []string{l.User}, Lease: &l})
	why := "The GPUs of " + id.String() + " went unwatched for a while after its idle warning (their node agent stopped reporting), so it was not reclaimed at the time the warning named."
	want := why + " Its GPUs are watched again and still idle; it will now be reclaimed at Mon 30 Nov 16:13 CET (in 13m) unless you keep it with /gpu keep " + id.String() + "."
	if len(rs) != 1 || rs[0].To != "anna@lab.example" || rs[0].Text != want || len(rs[0].Actions) != 2 ||
		rs[0].Actions[0].Command != "/gpu keep "+id.String() || rs[0].Actions[1].Command != "/gpu release "+id.String() {
		t.Errorf("the moved reclaim: %+v\nwant %q with Keep and Release", rs, want)
	}
	l.WarnedAt = l.ExpiresAt.Add(-time.Minute) // the grace (3m) would outlast the lease
	rs = h.bot.RenderNotice(context.Background(), qm.Notice{Kind: qm.NoticeReclaimMoved, To: []string{l.User}, Lease: &l})
	want = why + " Its GPUs are watched again and still idle, but a new grace would outlast the lease: it is not reclaimed, and runs until Mon 30 Nov 18:00 CET (in 2h)."
	if len(rs) != 1 || rs[0].Text != want || len(rs[0].Actions) != 1 || rs[0].Actions[0].Command != "/gpu release "+id.String() {
		t.Errorf("the moved reclaim past the lease's end: %+v\nwant %q with Release", rs, want)
	}
}

// A refusal that names the command to use instead gives that command as its example, not an
// example of the command that was just refused.
func TestRefusalsExampleTheCommandTheyName(t *testing.T) {
	h := newLabHarness(t)
	annas := leaseIn(t, mustOK(t, h.say("anna@lab.example", "/gpu request 1 notebook for 1h")).Text)
	owners := leaseIn(t, mustOK(t, h.say("jürgen@lab.example", "/gpu request 1 notebook for 3h")).Text)
	for _, tc := range []struct{ user, cmd, says, example string }{
		{"ben@lab.example", "/gpu extend " + annas.String() + " 30m", "You have no lease " + annas.String() + "; /gpu list shows yours.", "/gpu list"},
		{"ben@lab.example", "/gpu release " + annas.String(), "You have no lease " + annas.String() + "; /gpu list shows yours.", "/gpu list"},
		{"ben@lab.example", "/gpu keep " + annas.String(), "You have no lease " + annas.String() + "; /gpu list shows yours.", "/gpu list"},
		{"olga@lab.example", "/gpu approve " + owners.String(), "/gpu approvals lists those that are.", "/gpu approvals"},
		{"jürgen@lab.example", "/gpu approve " + owners.String(), "You cannot decide your own request " + owners.String() + "; only ops@lab.example can.", "/gpu status " + owners.String()},
	} {
		r := h.say(tc.user, tc.cmd)
		if !r.Error || !strings.Contains(r.Text, tc.says) || !strings.HasSuffix(r.Text, " Example: "+tc.example) {
			t.Errorf("%s: %s\n got %q\nwant %q … Example: %s", tc.user, tc.cmd, r.Text, tc.says, tc.example)
		}
	}
}

// An approved request that has to wait for GPUs tells its requester why it waits, as a request
// that queues at once does, and starts, with a message, when the GPUs are released.
func TestApprovedRequestThatQueuesSaysWhyItWaits(t *testing.T) {
	h := newLabHarness(t)
	holder := leaseIn(t, mustOK(t, h.say("ivan@lab.example", "/gpu request 2 notebook for 1h")).Text)
	id := leaseIn(t, mustOK(t, h.say("ben@lab.example", "/gpu request 1 notebook for 3h")).Text)
	h.notices("ben@lab.example")
	mustOK(t, h.say("jürgen@lab.example", "/gpu approve "+id.String()))
	got := texts(h.notices("ben@lab.example"))
	if !strings.HasPrefix(got, id.String()+" (for 1 × notebook for 3h) was approved by jürgen@lab.example and is queued: waiting for free GPUs. 1st in line for notebook. Predicted wait: ") {
		t.Errorf("ben was told %q", got)
	}
	if l := h.lease(id); l.State != qm.Queued || l.Reason != "waiting for free GPUs" {
		t.Errorf("%s is %s: %s", id, l.State, l.Reason)
	}
	mustOK(t, h.say("ivan@lab.example", "/gpu release "+holder.String()))
	got = texts(h.notices("ben@lab.example"))
	if !strings.HasPrefix(got, id.String()+" is active: 1 × notebook (A10) on a10-01") || !strings.Contains(got, "until Mon 30 Nov 19:00 CET (in 3h)") {
		t.Errorf("when the GPUs were released ben was told %q", got)
	}
}

// A request nobody decided in time is denied, and its requester is told how to ask again.
func TestUndecidedRequestDeniedSaysHowToAskAgain(t *testing.T) {
	h := newLabHarness(t)
	id := leaseIn(t, mustOK(t, h.say("anna@lab.example", "/gpu request 1 notebook for 3h")).Text)
	h.notices("anna@lab.example")
	h.advance(6*time.Hour + time.Minute) // approvals.timeout 6h
	told := h.notices("anna@lab.example")
	want := id.String() + " was denied: no decision within 6h; ask again with /gpu request 1 notebook for 3h."
	if len(told) != 1 || told[0].Text != want || len(told[0].Actions) != 1 || told[0].Actions[0].Command != "/gpu request 1 notebook for 3h" {
		t.Errorf("anna was told %+v\nwant %q with a Request again button", told, want)
	}
}

// While an extension of a lease waits for a budget owner, a further extension of that lease is
// refused with the waiting request named, whether it would wait too or be granted at once: two
// approvals would add twice what anyone meant. A redelivery of the first is still answered as
// done, and once the extension is decided the lease can be extended again.
func TestOneExtensionWaitsAtATime(t *testing.T) {
	h := newLabHarness(t)
	ctx := context.Background()
	sayKey := func(text, key string) bot.Reply {
		t.Helper()
		return h.bot.Handle(ctx, bot.Request{User: "anna@lab.example", Text: text, Key: key})[0]
	}
	pending := func(id qm.LeaseID) []*qm.Lease {
		t.Helper()
		ls, err := h.svc.List(ctx, qm.LeaseFilter{Kind: qm.KindExtension, Parent: id, States: []qm.State{qm.PendingApproval}})
		if err != nil {
			t.Fatal(err)
		}
		return ls
	}
	id := leaseIn(t, mustOK(t, h.say("anna@lab.example", "/gpu request 1 notebook for 1h")).Text)
	extend := "/gpu extend " + id.String() + " 4h"
	first := mustOK(t, sayKey(extend, "k1"))
	ext := extensionIn(t, first.Text)

	want := "An extension of " + id.String() + " (" + ext.String() + ", 4h more) is already waiting for approval by jürgen@lab.example, so it cannot be extended again until that is decided."
	example := "/gpu status " + ext.String()
	for _, text := range []string{extend, "/gpu extend " + id.String() + " 30m"} { // beyond the class's 2h, and within
		r := sayKey(text, "k-"+text)
		if !r.Error || !strings.HasPrefix(r.Text, want) || !strings.HasSuffix(r.Text, "Example: "+example) {
			t.Errorf("%s while %s waits: %q, want %q with Example: %s", text, ext, r.Text, want, example)
		}
	}
	if r := sayKey(extend, "k1"); r.Error || !strings.Contains(r.Text, ext.String()) {
		t.Errorf("the first extension delivered again: %q", r.Text)
	}
	if got := pending(id); len(got) != 1 || got[0].ID != ext {
		t.Fatalf("pending extensions of %s: %+v, want only %s", id, got, ext)
	}
	if l := h.lease(id); l.Duration != time.Hour {
		t.Errorf("%s runs %s before the decision, want 1h", id, l.Duration)
	}
	if r := mustOK(t, h.say("anna@lab.example", example)); !strings.Contains(r.Text, ext.String()) {
		t.Errorf("%s does not show %s: %q", example, ext, r.Text)
	}

	mustOK(t, h.say("jürgen@lab.example", "/gpu approve "+ext.String()))
	if l := h.lease(id); l.Duration != 5*time.Hour {
		t.Errorf("%s runs %s after approving %s, want 1h + 4h", id, l.Duration, ext)
	}
	next := extensionIn(t, mustOK(t, h.say("anna@lab.example", "/gpu extend "+id.String()+" 1h")).Text)
	if got := pending(id); len(got) != 1 || got[0].ID != next || next == ext {
		t.Errorf("after %s was decided, a new extension left %+v pending", ext, got)
	}
}

// The platform channel's notice of a lease that cannot be judged idle says what is true: where its
// node's agent reports but a GPU of the lease gives no utilization, that the GPU reports none and
// the lease is not reclaimed for idleness, not that its telemetry is missing; where the agent does
// not report, that the telemetry is missing.
func TestAnUnjudgedLeaseIsToldWhy(t *testing.T) {
	h := newLabHarness(t)
	id := leaseIn(t, mustOK(t, h.say("anna@lab.example", "/gpu request 1 notebook for 2h")).Text)
	l := h.lease(id)
	rs := h.bot.RenderNotice(context.Background(), qm.Notice{Kind: qm.NoticeTelemetryMissing, To: []string{"#gpu-platform"}, Lease: l, Reason: qm.UnjudgedNoUtilization})
	if len(rs) != 1 || !strings.Contains(rs[0].Text, "reports no utilization") || !strings.Contains(rs[0].Text, "will not be reclaimed for idleness") ||
		strings.Contains(rs[0].Text, "telemetry") {
		t.Errorf("a lease whose GPU gives no utilization: %q; want it said so, not missing telemetry", texts(rs))
	}
	rs = h.bot.RenderNotice(context.Background(), qm.Notice{Kind: qm.NoticeTelemetryMissing, To: []string{"#gpu-platform"}, Lease: l})
	if len(rs) != 1 || !strings.HasPrefix(rs[0].Text, "No GPU telemetry for "+id.String()) {
		t.Errorf("a lease without telemetry: %q", texts(rs))
	}
}

// The platform channel's notice of a lease whose node reports but not all of it says what is
// true: that the lease's GPU is missing from its node's reports, that a GPU of its node it may
// work on is, that a GPU of its node is busy with no job's process while the lease has none, or
// that its node reports a GPU its topology does not list; never that its telemetry is missing.
func TestALeaseItsNodeReportsOnlyInPartIsToldWhy(t *testing.T) {
	h := newLabHarness(t)
	id := leaseIn(t, mustOK(t, h.say("anna@lab.example", "/gpu request 1 notebook for 2h")).Text)
	l := h.lease(id)
	for why, want := range map[string][]string{
		qm.UnjudgedGPUMissing:     {"A GPU of " + id.String(), "is missing from its node's reports (lost or unreadable)", "idleness cannot be judged", "will not be reclaimed for idleness"},
		qm.UnjudgedNodeGPUMissing: {"A GPU of " + l.Node, "is missing from the node's reports (lost or unreadable)", "may work on it", "whether " + id.String() + " is idle cannot be judged"},
		qm.UnjudgedUnplacedBusy:   {id.String() + " (", "has no process on any GPU", "busy with no job's process", "cannot be told whose work", "will not be reclaimed for idleness"},
		qm.UnjudgedUnknownGPU:     {l.Node + " reports a GPU its topology does not list", "may work on it", "whether " + id.String() + " is idle cannot be judged", "will not be reclaimed for idleness"},
	} {
		rs := h.bot.RenderNotice(context.Background(), qm.Notice{Kind: qm.NoticeTelemetryMissing, To: []string{"#gpu-platform"}, Lease: l, Reason: why})
		if len(rs) != 1 || strings.Contains(rs[0].Text, "telemetry") {
			t.Errorf("%s: %q; want one notice, not of missing telemetry", why, texts(rs))
			continue
		}
		for _, w := range want {
			if !strings.Contains(rs[0].Text, w) {
				t.Errorf("%s: %q; want it to say %q", why, rs[0].Text, w)
			}
		}
	}
}
