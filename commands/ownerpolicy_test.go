package commands

import (
	"strings"
	"testing"
)

// A budget owner who is in no team reads /gpu policy as /gpu quota answers them: as someone in no
// team of the policy, never "for team g-owners", their directory group named as if it were a
// team.
func TestPolicyOfABudgetOwnerInNoTeamNamesNoTeamOfTheirs(t *testing.T) {
	h := newHarnessOn(t, ploverPolicy)
	const ines = "ines@plover.example"
	if q := mustOK(t, h.say(ines, "/gpu quota")); !strings.Contains(q.Text, "You are in no team") {
		t.Fatalf("/gpu quota answered %q", q.Text)
	}
	for _, ask := range []string{"/gpu policy", "/gpu catalog"} {
		all := mustOK(t, h.say(ines, ask)).PlainText()
		if strings.Contains(all, "g-owners") {
			t.Errorf("%s of an owner in no team names their group as a team:\n%s", ask, all)
		}
		if ask == "/gpu policy" && !strings.Contains(all, "without approval for a team the policy does not list") {
			t.Errorf("%s of an owner in no team does not say what an unlisted team gets:\n%s", ask, all)
		}
	}
}
