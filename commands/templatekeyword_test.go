package commands

import "testing"

// A request whose template word is followed by another of the request's words (template for 4h,
// template team reef, template data brine) is told that a template name must follow template,
// with the request as typed without the word as its example, as template 4h is; before, the word
// was looked up as a template's name ("There is no template \"for\"").
func TestATemplateWordFollowedByARequestWordIsSaidToNeedAName(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	for _, tc := range []struct{ ask, example string }{
		{"request 1 tidal template for 4h", "request 1 tidal for 4h"},
		{"request 2 abyss for 2h template team reef", "request 2 abyss for 2h team reef"},
		{"request 1 tidal for 3h template data brine", "request 1 tidal for 3h data brine"},
		{"request 1 tidal for 1h template exclusive", "request 1 tidal for 1h exclusive"},
	} {
		refusedAs(t, h, who, tc.ask, `"template" must be followed by a template name`, tc.example)
	}
}
