package commands

import (
	"strings"
	"testing"
)

// A request naming a data class no team has, a typo of one a team has, reaches the budget owner
// with the same hint its requester got, so that they can deny it with the class meant; a data
// class far from any gets none.
func TestTheApprovalCardPointsOutADataClassTypo(t *testing.T) {
	h := newHarnessOn(t, ploverPolicy)
	const joao, ines = "joao@plover.example", "ines@plover.example"
	r := mustOK(t, h.say(joao, "/gpu request 1 wren for 1h data clinicl"))
	if !strings.Contains(r.Text, "waits for approval") || !strings.Contains(r.Text, "did you mean clinical?") {
		t.Fatalf("the request answered %q", r.Text)
	}
	var card string
	for _, n := range h.notices(ines) {
		if strings.HasPrefix(n.Text, "Approval needed") {
			card = n.Text
		}
	}
	if want := `No team has data class "clinicl"; did you mean clinical?`; !strings.Contains(card, want) {
		t.Errorf("the approval card %q does not say %q", card, want)
	}
	mustOK(t, h.say(joao, "/gpu request 1 wren for 1h data zebra"))
	for _, n := range h.notices(ines) {
		if strings.Contains(n.Text, "did you mean") {
			t.Errorf("a data class far from any: the card says %q", n.Text)
		}
	}
}
