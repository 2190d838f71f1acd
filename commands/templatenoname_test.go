package commands

import "testing"

// A request whose template word is followed by its length, not a template's name (template 4h),
// is told that a template name must follow template, with the request as typed without the word
// as its example; before, the length was looked up as a template and the example showed a
// template (/gpu template NAME), which requests nothing.
func TestATemplateWordWithoutItsNameIsSaidToNeedOne(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	for _, tc := range []struct{ ask, example string }{
		{"request 1 tidal template 4h", "request 1 tidal for 4h"},
		{"request 2 abyss template 90m exclusive", "request 2 abyss for 1h30m exclusive"},
	} {
		refusedAs(t, h, who, tc.ask, `"template" must be followed by a template name`, tc.example)
	}
}
