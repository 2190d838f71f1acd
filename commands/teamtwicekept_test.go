package commands

import "testing"

// A job naming its team twice (team=robotics team=reef) where only one of the two is a team the
// asker is in is refused as given twice with the job naming that team as the example, which
// is then run; before, the example kept the first, and was refused in turn.
func TestATeamGivenTwiceKeepsTheOneThatWorks(t *testing.T) {
	h := kelpOn(t)
	for _, tc := range []struct{ who, ask, example string }{
		{"mara@kelp.example", "submit depth-probe team=robotics team=reef", "submit depth-probe team=reef"},
		{"mara@kelp.example", "submit depth-probe size=128 team=reef team=robotics", "submit depth-probe size=128 team=reef"},
		{"rua@kelp.example", "submit depth-probe team=kelp-forest team=reef", "submit depth-probe team=reef"},
		{"olin@kelp.example", "submit depth-probe team=kelp-forest team=reef", "submit depth-probe team=kelp-forest"},
	} {
		refusedAs(t, h, tc.who, tc.ask, "gives team= twice; give it once.", tc.example)
	}
}
