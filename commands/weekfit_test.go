package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// saltmarshPolicy is a policy of its own: one class on two nodes of 4 GPUs each, which the
// service fills in whole nodes for an exclusive request or one larger than a node, and one team
// (voles: 8 GPUs at once, 10 GPU-hours a week). Its rules send only what passes the GPUs at once
// to a budget owner; weekRule adds one for the week's GPU-hours.
const saltmarshPolicy = `organization: Saltmarsh Coop
currency: NZD
timezone: Pacific/Auckland
classes:
  - name: tern
    description: Whole-node L40S
    sku: L40S
    gpu_memory_gib: 48
    price_per_gpu_hour: 1.10
    isolation: shared
    max_gpus: 8
    max_duration: 1d
    idle_timeout: 1h
    idle_grace: 10m
    slurm: {partition: tern, gres: "gpu:l40s"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: tern}}
default_quota: {gpus: {tern: 1}, gpu_hours_per_week: 2}
teams:
  - name: voles
    idp_groups: [grp-voles]
    budget_owners: [vera@saltmarsh.example]
    quota: {gpus: {tern: 8}, gpu_hours_per_week: 10}
    data_classes: [moss, reed]
exceptions:
  - name: past-at-once
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]
    why: Past the team's GPUs at once
approvals:
  timeout: 12h
  self_approval: false
  fallback_approvers: [ops@saltmarsh.example]
backend: sim
directory:
  - {user: ivo@saltmarsh.example, groups: [grp-voles]}
  - {user: vera@saltmarsh.example, groups: [grp-voles]}
  - {user: ops@saltmarsh.example, groups: [ops]}
sim:
  nodes:
    - {name: ln, count: 2, class: tern, gpus: 4}
`

// weekRule sends a request past the team's week to a budget owner.
const weekRule = `  - name: past-the-week
    when: usage.gpu_hours_week + request.gpu_hours > team.quota.gpu_hours_per_week
    why: Past the team's week
`

func saltmarshOn(t *testing.T, withWeekRule bool) *harness {
	t.Helper()
	pol := saltmarshPolicy
	if withWeekRule {
		pol = strings.Replace(pol, "approvals:\n", weekRule+"approvals:\n", 1)
	}
	path := filepath.Join(t.TempDir(), "saltmarsh.yaml")
	if err := os.WriteFile(path, []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	return newHarnessOn(t, path)
}

const ivo = "ivo@saltmarsh.example"

// A request past the team's weekly GPU-hours, on a policy whose rules do not send that to a
// budget owner, is refused with the request that fits what the week has left as its example
// (shorter, else fewer GPUs; the whole nodes an exclusive request or one larger than a node
// takes counted as the service counts them), the quota request named as the other way; typed
// back, the example is granted at once. Where nothing fits, the example is the quota request.
func TestAWeekRefusalSuggestsTheRequestThatFits(t *testing.T) {
	for _, tc := range []struct{ fill, ask, want string }{
		{"", "/gpu request 1 tern for 14h", "/gpu request 1 tern for 10h"},
		// The data class typed stays, though it is not the team's first.
		{"", "/gpu request 1 tern for 14h data reed", "/gpu request 1 tern for 10h data reed"},
		{"", "/gpu request 1 tern for 14h exclusive data reed", "/gpu request 1 tern for 2h30m exclusive data reed"},
		{"", "/gpu request 4 tern for 5h", "/gpu request 4 tern for 2h30m"},
		{"/gpu request 2 tern for 2h", "/gpu request 2 tern for 5h", "/gpu request 2 tern for 3h"},
		// 6 GPUs take two whole nodes, 8 GPUs; one GPU exclusive a whole node of 4.
		{"", "/gpu request 6 tern for 5h", "/gpu request 6 tern for 1h15m"},
		{"", "/gpu request 1 tern for 5h exclusive", "/gpu request 1 tern for 2h30m exclusive"},
		// Not a minute of 2 GPUs is left, a minute of 1 is.
		{"/gpu request 1 tern for 9h59m", "/gpu request 2 tern for 1h", "/gpu request 1 tern for 1m"},
	} {
		h := saltmarshOn(t, false)
		if tc.fill != "" {
			mustOK(t, h.say(ivo, tc.fill))
		}
		r := h.say(ivo, tc.ask)
		if !r.Error || !strings.Contains(r.Text, "/gpu quota request") {
			t.Errorf("%s: %q; want a refusal that names the quota request as the other way", tc.ask, r.Text)
		}
		refusedWith(t, h, ivo, tc.ask, tc.want)
	}
	h := saltmarshOn(t, false)
	mustOK(t, h.say(ivo, "/gpu request 1 tern for 10h"))
	if ex := exampleIn(t, h.say(ivo, "/gpu request 1 tern for 1h")); !strings.HasPrefix(ex, "/gpu quota request +1 tern because ") {
		t.Errorf("with the week used up: example %q, want the quota request", ex)
	}
}

// On a policy whose rules send a request past the week to a budget owner, the same requests are
// not refused: they wait for the budget owner.
func TestAWeekRuleSendsTheRequestForApproval(t *testing.T) {
	for _, ask := range []string{"/gpu request 1 tern for 14h", "/gpu request 6 tern for 5h", "/gpu request 1 tern for 5h exclusive"} {
		h := saltmarshOn(t, true)
		r := h.say(ivo, ask)
		if r.Error || !strings.Contains(r.Text, "vera@saltmarsh.example") {
			t.Errorf("%s: %q; want it sent to vera for approval", ask, r.Text)
		}
	}
}

// A refused request's example, fitted to the team's quota, counts the whole nodes the service
// holds for an exclusive request or one larger than a node, at once and in the week's GPU-hours,
// so that typed back it is granted at once.
func TestAFittedExampleCountsWholeNodes(t *testing.T) {
	for _, tc := range []struct{ fill, ask, want string }{
		{"", "/gpu request 1 tern for 40d exclusive", "/gpu request 1 tern for 2h30m exclusive"},
		{"", `/gpu request 6 tern for 5h data "a b"`, "/gpu request 6 tern for 1h15m data moss"},
		// 6 GPUs left at once: 5 or 6 would take two whole nodes, 8 GPUs.
		{"/gpu request 2 tern for 1h", "/gpu request 20 tern for 1h", "/gpu request 4 tern for 1h"},
		{"/gpu request 2 tern for 1h", "/gpu request 20 tern for 1h exclusive", "/gpu request 4 tern for 1h exclusive"},
	} {
		h := saltmarshOn(t, false)
		if tc.fill != "" {
			mustOK(t, h.say(ivo, tc.fill))
		}
		refusedWith(t, h, ivo, tc.ask, tc.want)
	}
}

// A request that waits for a budget owner past the team's GPUs at once and its week is told the
// request that needs no decision, its whole nodes counted as the service counts them.
func TestTheRequestWithinTheQuotaCountsWholeNodes(t *testing.T) {
	h := saltmarshOn(t, false)
	mustOK(t, h.say(ivo, "/gpu request 2 tern for 1h"))
	r := h.say(ivo, "/gpu request 6 tern for 5h")
	const want = "A request within the quota needs no decision: /gpu request 4 tern for 2h."
	if r.Error || !strings.Contains(r.Text, want) {
		t.Fatalf("/gpu request 6 tern for 5h: %q; want %q", r.Text, want)
	}
	typedBack(t, h, ivo, "/gpu request 6 tern for 5h", "/gpu request 4 tern for 2h", false)
}

// A template job or template request refused for the week's GPU-hours gets, as its example, the
// command typed (its parameters, data class and team kept) with the length that fits the week,
// in the form typed; typed back it is granted at once.
func TestATemplateWeekRefusalKeepsWhatWasTyped(t *testing.T) {
	for ask, want := range map[string]string{
		"/gpu submit hf-lora class=tern gpus=1 for=14h dataset=datasets/support-chats":          "/gpu submit hf-lora class=tern gpus=1 for=10h dataset=datasets/support-chats",
		"/gpu request 1 tern for 14h template hf-lora dataset=datasets/support-chats data moss": "/gpu request 1 tern for 10h template hf-lora dataset=datasets/support-chats data moss",
		"/gpu request 2 tern for 9h template cuda-smoke size=1024":                              "/gpu request 2 tern for 5h template cuda-smoke size=1024",
	} {
		h := saltmarshOn(t, false)
		cat, err := templates.Load(qmtemplates.FS)
		if err != nil {
			t.Fatal(err)
		}
		AddTemplates(h.bot, cat, workload.Settings{})
		refusedWith(t, h, ivo, ask, want)
	}
}

// An extension past the team's weekly GPU-hours, with no rule that sends it to a budget owner,
// is refused with the shorter extension that fits what the week has left as its example (the
// lease's whole nodes counted), the quota request named as the other way; typed back it is
// granted. Where not a minute is left, the example is the quota request.
func TestAWeekRefusedExtensionSuggestsTheOneThatFits(t *testing.T) {
	for _, tc := range []struct{ lease, by, want string }{
		{"/gpu request 2 tern for 3h", "5h", "2h"},
		{"/gpu request 1 tern for 1h exclusive", "5h", "1h30m"},
	} {
		h := saltmarshOn(t, false)
		id := leaseIn(t, mustOK(t, h.say(ivo, tc.lease)).Text).String()
		ask, want := "/gpu extend "+id+" "+tc.by, "/gpu extend "+id+" "+tc.want
		r := h.say(ivo, ask)
		if !r.Error || !strings.Contains(r.Text, "/gpu quota request") {
			t.Errorf("%s: %q; want a refusal that names the quota request as the other way", ask, r.Text)
		}
		if ex := exampleIn(t, r); ex != want {
			t.Errorf("%s: example %q, want %q", ask, ex, want)
			continue
		}
		mustOK(t, h.say(ivo, want))
	}
	h := saltmarshOn(t, false)
	id := leaseIn(t, mustOK(t, h.say(ivo, "/gpu request 1 tern for 10h")).Text).String()
	if ex := exampleIn(t, h.say(ivo, "/gpu extend "+id+" 1h")); !strings.HasPrefix(ex, "/gpu quota request +1 tern because ") {
		t.Errorf("with the week used up: example %q, want the quota request", ex)
	}
}
