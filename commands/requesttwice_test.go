package commands

import "testing"

// A request that names its team, data class, template or duration twice is refused naming that
// one, whichever keyword was typed twice, with the first kept in the example.
func TestARequestGivenAKeywordTwiceSaysWhich(t *testing.T) {
	h := kelpOn(t)
	for _, tc := range []struct{ ask, says, example string }{
		{"request 1 tidal for 1h team kelp-forest team reef", "names its team twice; give it once", "request 1 tidal for 1h team kelp-forest"},
		{"request 1 tidal for 1h data silt data brine", "names its data class twice; give it once", "request 1 tidal for 1h data silt"},
		{"request 1 tidal for 1h template depth-probe team reef team reef", "names its team twice; give it once", "request 1 tidal for 1h template depth-probe team reef"},
		{"request 1 tidal for 1h template depth-probe data brine data silt", "names its data class twice; give it once", "request 1 tidal for 1h template depth-probe data brine"},
		{"request 1 tidal for 1h template lagoon-lab template depth-probe", "names its template twice; give it once", "request 1 tidal for 1h template lagoon-lab"},
		{"request 1 tidal for 1h template lagoon-lab root=notes team reef team kelp-forest", "names its team twice; give it once", "request 1 tidal for 1h template lagoon-lab root=notes team reef"},
		{"request 1 tidal for 1h team reef template lagoon-lab data silt team reef", "names its team twice; give it once", "request 1 tidal for 1h template lagoon-lab team reef data silt"},
		{"request 1 tidal template lagoon-lab for 1h data silt template lagoon-lab", "names its template twice; give it once", "request 1 tidal for 1h template lagoon-lab data silt"},
		{"request 1 tidal for 1h duration 2h", "names its duration twice; give it once", "request 1 tidal for 1h"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
	}
}
