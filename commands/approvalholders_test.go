package commands

import (
	"regexp"
	"strings"
	"testing"
	"time"
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

// approvalCard is the last approval card, or edit of one, of id that who was sent.
func approvalCard(h *harness, who string, id string) string {
	var card string
	for _, n := range h.notices(who) {
		if n.Ref == "approval:"+id {
			card = n.Text
		}
	}
	return card
}

// The cards of a quota increase and of an extension say what the team holds of the class now
// too: more GPUs of it, or those it holds for longer, are what the budget owner decides on.
func TestQuotaAndExtensionCardsSayWhatTheTeamHolds(t *testing.T) {
	h := newHarnessOn(t, "testdata/orbit.yaml")
	const kim, ria = "kim@orbit.example", "ria@orbit.example"
	run := leaseIn(t, mustOK(t, h.say(kim, "/gpu request 2 duo for 2h")).Text)
	mustOK(t, h.say(kim, "/gpu request 1 duo for 3h"))
	h.notices(ria)
	const held = "Team robotics holds 3 of its 4 duo GPUs now: L-1 (2, running), L-2 (1, running)."
	quota := leaseIn(t, mustOK(t, h.say(kim, "/gpu quota request +2 duo for 1d because a deadline")).Text)
	if card := approvalCard(h, ria, quota.String()); !strings.Contains(card, held) {
		t.Errorf("the quota increase's card %q does not say %q", card, held)
	}
	asked := mustOK(t, h.say(kim, "/gpu extend "+run.String()+" 20h")).Text
	ext := regexp.MustCompile(`waits for approval as (L-\d+)`).FindStringSubmatch(asked)
	if ext == nil {
		t.Fatalf("the extension does not wait for approval: %q", asked)
	}
	if card := approvalCard(h, ria, ext[1]); !strings.Contains(card, held) {
		t.Errorf("the extension's card %q does not say %q", card, held)
	}
}

// The line is what the team holds when the card is rendered: the edit at a decision or at the
// timeout says what it holds then, not what it held when the request was asked.
func TestTheHoldersLineIsRefreshedWhenTheCardIsEdited(t *testing.T) {
	h := newHarnessOn(t, "testdata/orbit.yaml")
	const kim, ria = "kim@orbit.example", "ria@orbit.example"
	first := leaseIn(t, mustOK(t, h.say(kim, "/gpu request 2 duo for 8h")).Text)
	mustOK(t, h.say(kim, "/gpu request 2 duo for 8h"))
	h.notices(ria)
	wait := leaseIn(t, mustOK(t, h.say(kim, "/gpu request 1 duo for 1h")).Text)
	if card := approvalCard(h, ria, wait.String()); !strings.Contains(card, "Team robotics holds 4 of its 4 duo GPUs now: L-1 (2, running), L-2 (2, running).") {
		t.Fatalf("the card when asked: %q", card)
	}
	mustOK(t, h.say(kim, "/gpu release "+first.String()))
	mustOK(t, h.say(kim, "/gpu request 2 duo for 8h")) // L-4
	mustOK(t, h.say(ria, "/gpu approve "+wait.String()))
	card := approvalCard(h, ria, wait.String())
	if !strings.Contains(card, "Team robotics holds 5 of its 4 duo GPUs now: L-2 (2, running), L-3 (1, running), L-4 (2, running).") {
		t.Errorf("the card edited at the approval: %q", card)
	}

	// L-5 waits past its timeout; meanwhile the leases it waited behind end and others hold
	// the team's GPUs.
	timeout := leaseIn(t, mustOK(t, h.say(kim, "/gpu request 1 duo for 1h")).Text)
	h.advance(20 * time.Hour)
	mustOK(t, h.say(kim, "/gpu request 2 duo for 8h")) // L-6
	mustOK(t, h.say(kim, "/gpu request 2 duo for 8h")) // L-7
	h.notices(ria)
	h.advance(5 * time.Hour)
	card = approvalCard(h, ria, timeout.String())
	if !strings.Contains(card, "expired undecided") || !strings.Contains(card, "Team robotics holds 4 of its 4 duo GPUs now: L-6 (2, running), L-7 (2, running).") {
		t.Errorf("the card edited at the timeout: %q", card)
	}
}
