package commands

import "testing"

// /gpu submit with its template written as a mention (@depth-probe), or with a typo, is refused
// with the job of the template meant as the example, the parameters typed kept; before, the
// example was /gpu template, which shows the template and runs nothing.
func TestASubmitOfATemplateMentionedGivesTheSubmit(t *testing.T) {
	h := kelpOn(t)
	for _, tc := range []struct{ ask, says, example string }{
		{"submit @depth-probe", `There is no template "@depth-probe"; did you mean depth-probe?`, "submit depth-probe"},
		{"submit @depth-probe size=128", `There is no template "@depth-probe"; did you mean depth-probe?`, "submit depth-probe size=128"},
		{"submit depth-prob size=256 team=reef", `There is no template "depth-prob"; did you mean depth-probe?`, "submit depth-probe size=256 team=reef"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
	}
}
