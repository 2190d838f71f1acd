package commands

import (
	"strings"
	"testing"
)

// A request naming its template as a mention (template @lagoon-lab) or with a typo gets, as its
// example, the request as typed naming the template meant (template lagoon-lab), its class,
// length, team and data class kept; before, it was /gpu template NAME, which shows the template
// and starts nothing.
func TestARequestsTemplateAsAMentionGetsTheRequestAsItsExample(t *testing.T) {
	h := kelpOn(t)
	for _, tc := range []struct{ ask, says, example string }{
		{"request 1 tidal for 2h template @lagoon-lab", `There is no template "@lagoon-lab"; did you mean lagoon-lab?`, "request 1 tidal for 2h template lagoon-lab"},
		{"request 1 tidal for 3h template @depth-probe team reef data brine", `There is no template "@depth-probe"; did you mean depth-probe?`, "request 1 tidal for 3h template depth-probe team reef data brine"},
		{"request 1 tidal for 2h template lagon-lab", `There is no template "lagon-lab"; did you mean lagoon-lab?`, "request 1 tidal for 2h template lagoon-lab"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
	}
	// A template the request cannot mean keeps the catalog's own answer.
	if r := h.say("mara@kelp.example", "/gpu request 1 tidal for 2h template zzzzzz"); !r.Error || strings.Contains(r.Text, "template zzzzzz") {
		t.Errorf("an unknown template answered %q", r.Text)
	}
}
