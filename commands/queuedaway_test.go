package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
)

// fjordPolicy is a small policy with its own names: Swiss francs, New Zealand's time zone, a
// class of one 2-GPU node (kiln) and one of 4-GPU nodes (anvil) that gives 4 hours without
// approval, and a team with 12 GPU-hours a week. rules is its exception rules, YAML list items.
func fjordPolicy(t *testing.T, rules string) string {
	t.Helper()
	pol := `organization: Fjord Works
currency: CHF
timezone: Pacific/Auckland
classes:
  - name: kiln
    description: Shared L4 pair
    sku: L4
    gpu_memory_gib: 24
    price_per_gpu_hour: 0.40
    isolation: shared
    max_gpus: 2
    max_duration: 12h
    idle_timeout: 1h
    idle_grace: 15m
    slurm: {partition: kiln, gres: "gpu:l4"}
  - name: anvil
    description: Shared H100s
    sku: H100
    gpu_memory_gib: 80
    price_per_gpu_hour: 3.00
    isolation: shared
    max_gpus: 4
    max_duration: 4h
    idle_timeout: 1h
    idle_grace: 15m
    slurm: {partition: anvil, gres: "gpu:h100"}
default_quota: {gpus: {kiln: 1}, gpu_hours_per_week: 2}
teams:
  - name: glass
    idp_groups: [g-glass]
    budget_owners: [ivo@fjord.example]
    quota: {gpus: {kiln: 4, anvil: 2}, gpu_hours_per_week: 12}
    data_classes: [open]
exceptions:
` + rules + `approvals:
  timeout: 24h
  self_approval: false
  fallback_approvers: [ops@fjord.example]
backend: sim
directory:
  - {user: lea@fjord.example, groups: [g-glass]}
  - {user: ivo@fjord.example, groups: [g-glass]}
  - {user: ops@fjord.example, groups: [ops]}
sim:
  nodes:
    - {name: kiln, count: 1, class: kiln, gpus: 2, nvlink_islands: 1}
    - {name: anvil, count: 2, class: anvil, gpus: 4, nvlink_islands: 1}
`
	out := filepath.Join(t.TempDir(), "fjord.yaml")
	if err := os.WriteFile(out, []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

const fjordLong = `  - name: lengthy
    when: request.duration > class.max_duration
    why: Longer than the class gives unasked
`

const fjordBudget = `  - name: budget
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name] || usage.gpu_hours_week + request.gpu_hours > team.quota.gpu_hours_per_week
    why: Beyond the team's budget
`

// A lease queued for GPUs whose requester's sign-in was revoked does not start until they sign
// in again: /gpu status says so to a budget owner who looks (and to the fallback approver), and
// the lease's card, as /gpu list shows it, says what it waits for; not that it waits for free
// GPUs.
func TestAQueuedLeaseOfARevokedRequesterSaysItWaitsForTheirSignIn(t *testing.T) {
	h := newHarnessOn(t, fjordPolicy(t, fjordLong))
	const lea, ivo, ops = "lea@fjord.example", "ivo@fjord.example", "ops@fjord.example"
	mustOK(t, h.say(lea, "/gpu request 2 kiln for 1h"))
	queued := leaseIn(t, mustOK(t, h.say(lea, "/gpu request 1 kiln for 1h")).Text)
	if l := h.lease(queued); l.State != qm.Queued || l.Ref != "" {
		t.Fatalf("%s is %s (ref %q); want queued for GPUs", queued, l.State, l.Ref)
	}
	h.svc.Directory = revokedSignIns{Policy: h.svc.Policy, out: map[string]bool{lea: true}}
	for _, who := range []string{ivo, ops} {
		r := mustOK(t, h.say(who, "/gpu status "+queued.String()))
		card := sectionsText(r.Sections)
		if !strings.Contains(r.Text, lea+" to sign in again") || !strings.Contains(r.Text, "/gpu login") || strings.Contains(r.Text, "waiting for free GPUs") {
			t.Errorf("/gpu status of %s to %s: %q; want it to wait for %s to sign in again", queued, who, r.Text, lea)
		}
		if !strings.Contains(card, "Waiting: for "+lea+" to sign in again") {
			t.Errorf("the card of %s to %s: %q; want what it waits for", queued, who, card)
		}
	}
	// Signed in again, it waits for GPUs as before.
	h.svc.Directory = revokedSignIns{Policy: h.svc.Policy, out: map[string]bool{}}
	if r := mustOK(t, h.say(lea, "/gpu status "+queued.String())); strings.Contains(r.Text+sectionsText(r.Sections), "sign in again") {
		t.Errorf("/gpu status once signed in again: %q", r.Text)
	}
	if r := mustOK(t, h.say(lea, "/gpu list")); strings.Contains(sectionsText(r.Sections), "sign in again") {
		t.Errorf("/gpu list once signed in again: %q", sectionsText(r.Sections))
	}
}

// sectionsText is the text and fields of sections, one line each.
func sectionsText(ss []bot.Section) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(s.Title + ": " + s.Text + "\n")
		for _, f := range s.Fields {
			b.WriteString(f.Label + ": " + f.Value + "\n")
		}
	}
	return b.String()
}
