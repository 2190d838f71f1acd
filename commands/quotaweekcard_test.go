package commands

import (
	"strings"
	"testing"
)

// A request that a rule about the quota sends to a budget owner because of the team's weekly
// GPU-hours, not its GPUs at once, gets a card that says so with the numbers: what the team has
// used or committed this week, what the request adds, and the weekly quota it passes.
func TestTheCardSaysWhenTheWeeklyGPUHoursArePassed(t *testing.T) {
	pol := policyVariant(t, "testdata/orbit.yaml", "quota: {gpus: {duo: 4, quad: 24, hex: 6}, gpu_hours_per_week: 2000}", "quota: {gpus: {duo: 4, quad: 24, hex: 6}, gpu_hours_per_week: 20}")
	h := newHarnessOn(t, pol)
	const kim, ria = "kim@orbit.example", "ria@orbit.example"
	mustOK(t, h.say(kim, "/gpu request 2 duo for 8h"))
	h.notices(ria)
	wait := leaseIn(t, mustOK(t, h.say(kim, "/gpu request 1 duo for 6h")).Text)
	card := approvalCard(h, ria, wait.String())
	const week = "It would take team robotics to 22 of its 20 GPU-hours this week: 16 used or committed, and 6 for this request."
	if !strings.Contains(card, week) {
		t.Errorf("the card %q does not say %q", card, week)
	}
	if strings.Contains(card, "duo GPUs now") {
		t.Errorf("the card %q speaks of GPUs at once, which the request stays within", card)
	}
	// Approved, the edited card says where the week stands now.
	mustOK(t, h.say(ria, "/gpu approve "+wait.String()))
	if card := approvalCard(h, ria, wait.String()); !strings.Contains(card, "Team robotics has used or committed 22 of its 20 GPU-hours this week.") {
		t.Errorf("the card edited at the approval: %q", card)
	}
}

// The note that a request would also take its team past its quota (no rule about the quota
// met) names each limit it passes: GPUs at once and GPU-hours this week.
func TestTheQuotaNoteNamesBothLimitsPassed(t *testing.T) {
	pol := policyVariant(t, "testdata/orbit.yaml",
		"quota: {gpus: {duo: 4, quad: 24, hex: 6}, gpu_hours_per_week: 2000}", "quota: {gpus: {duo: 4, quad: 24, hex: 6}, gpu_hours_per_week: 20}",
		"  - name: quota\n    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name] || usage.gpu_hours_week + request.gpu_hours > team.quota.gpu_hours_per_week\n    why: Beyond the team's quota\n", "")
	h := newHarnessOn(t, pol)
	const kim, ria = "kim@orbit.example", "ria@orbit.example"
	mustOK(t, h.say(kim, "/gpu request 2 duo for 8h"))
	h.notices(ria)
	r := mustOK(t, h.say(kim, "/gpu request 3 duo for 8h")) // whole nodes: 4 GPUs, 32 GPU-hours
	const note = "past its quota, to 6 of its 4 duo GPUs at once and to 48 of its 20 GPU-hours this week"
	if !strings.Contains(r.Text, "waits for approval") {
		t.Fatalf("the request: %q", r.Text)
	}
	if card := approvalCard(h, ria, leaseIn(t, r.Text).String()); !strings.Contains(card, note) {
		t.Errorf("the card %q does not say %q", card, note)
	}
}
