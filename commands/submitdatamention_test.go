package commands

import (
	"strings"
	"testing"
)

// A job's data class written as a key and a mention (data=@silt), of one of the policy's data
// classes, is told a job names it as a request does, without the @, with the job as typed naming
// it so (data silt) as the example, as data @silt is; a mention of no data class, or of many
// (@here, @everyone, @channel), is offered as no data class.
func TestAJobsDataClassAsKeyAndMentionIsNamedWithoutTheAt(t *testing.T) {
	h := kelpOn(t)
	for _, tc := range []struct{ ask, says, example string }{
		{"submit depth-probe data=@silt", `"data=@silt" is no parameter of depth-probe; a job names its data class as a request does, without the @: data silt.`, "submit depth-probe data silt"},
		{"submit depth-probe size=128 data=@brine team=reef", `"data=@brine" is no parameter of depth-probe; a job names its data class as a request does, without the @: data brine.`, "submit depth-probe size=128 team=reef data brine"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
	}
	for _, ask := range []string{"submit depth-probe data=@here", "submit depth-probe data=@everyone", "submit depth-probe data=@channel", "submit depth-probe data=@ghost"} {
		r := h.say("mara@kelp.example", "/gpu "+ask)
		if !r.Error || strings.Contains(r.Text, "without the @") || strings.Contains(r.Text, "data here") || strings.Contains(r.Text, "data ghost") || strings.Contains(r.Text, "{") {
			t.Errorf("/gpu %s answered %q; a mention of no data class is not offered as one", ask, r.Text)
		}
	}
}
