package commands

import (
	"strings"
	"testing"
)

// The budget owners' approval card of a request that would take its team past its quota says
// what the team holds now, and by which leases, as the requester's reply does.
func TestTheApprovalCardSaysWhatTheTeamHolds(t *testing.T) {
	h := newHarnessOn(t, "testdata/orbit.yaml")
	mustOK(t, h.say("kim@orbit.example", "/gpu request 2 duo for 2h"))
	mustOK(t, h.say("kim@orbit.example", "/gpu request 2 duo for 3h"))
	h.notices("ria@orbit.example")
	r := mustOK(t, h.say("kim@orbit.example", "/gpu request 1 duo for 1h"))
	const held = "Team robotics holds 4 of its 4 duo GPUs now: L-1 (2, running), L-2 (2, running)."
	if !strings.Contains(r.Text, "waits for approval") || !strings.Contains(r.Text, held) {
		t.Fatalf("the requester's reply: %q", r.Text)
	}
	var card string
	for _, n := range h.notices("ria@orbit.example") {
		if strings.HasPrefix(n.Text, "Approval needed") {
			card = n.Text
		}
	}
	if !strings.Contains(card, held) {
		t.Errorf("the approval card %q does not say %q", card, held)
	}
	// A request that waits for another rule, within the quota, says nothing of it.
	h.notices("ria@orbit.example")
	mustOK(t, h.say("kim@orbit.example", "/gpu request 4 hex for 1h"))
	mustOK(t, h.say("kim@orbit.example", "/gpu request 1 quad for 60h"))
	for _, n := range h.notices("ria@orbit.example") {
		if strings.Contains(n.Text, " holds ") {
			t.Errorf("a card of a request within the quota: %q", n.Text)
		}
	}
}
