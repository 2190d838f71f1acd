package commands

import (
	"strings"
	"testing"
)

// An approval that itself takes the team past its weekly GPU-hours says so once on the decided
// card: the note of the approval names the numbers, and the line of what the team holds does
// not say them again.
func TestTheDecidedCardGivesTheWeekOnce(t *testing.T) {
	h := newHarnessOn(t, fjordPolicy(t, fjordLong))
	const lea, ivo = "lea@fjord.example", "ivo@fjord.example"
	long := leaseIn(t, mustOK(t, h.say(lea, "/gpu request 1 anvil for 10h")).Text)
	mustOK(t, h.say(lea, "/gpu request 1 kiln for 3h"))
	h.notices(ivo)
	r := mustOK(t, h.say(ivo, "/gpu approve "+long.String()))
	const note = "This approval takes team glass past its quota, to 13 of its 12 GPU-hours this week."
	if !strings.Contains(r.Text, note) {
		t.Fatalf("the approver's reply %q; want %q", r.Text, note)
	}
	card := approvalCard(h, ivo, long.String())
	if !strings.Contains(card, note) || strings.Count(card, "12 GPU-hours this week") != 1 {
		t.Errorf("the decided card %q; want the week's numbers once, as %q", card, note)
	}
}
