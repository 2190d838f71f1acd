package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A data class written as a mention (data @silt) is said to be named without the @, with the
// command naming it so as the example, where it is one of the policy's data classes; before, it
// was no data class, with the team's first data class as the example. A mention of no data class
// (or of everyone, here, channel, which chat apps read as mentions) is not offered as one.
func TestADataClassWrittenAsAMentionIsNamedWithoutTheAt(t *testing.T) {
	h := kelpOn(t)
	for _, tc := range []struct{ ask, says, example string }{
		{"request 1 tidal for 2h data @silt", `"@silt" is a mention; a data class is named without the @: silt.`, "request 1 tidal for 2h data silt"},
		{"request 1 abyss 3h team reef data @brine", `"@brine" is a mention; a data class is named without the @: brine.`, "request 1 abyss for 3h team reef data brine"},
		{"submit depth-probe size=128 data @silt", `"@silt" is a mention; a data class is named without the @: silt.`, "submit depth-probe size=128 data silt"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
	}
	for _, ask := range []string{"request 1 tidal data @here", "request 1 tidal data @everyone", "request 1 tidal data @ghost"} {
		r := h.say("mara@kelp.example", "/gpu "+ask)
		if !r.Error || strings.Contains(r.Text, "without the @") {
			t.Errorf("/gpu %s answered %q; a mention of no data class is not offered as one", ask, r.Text)
		}
	}
	// A policy whose data class is named here: still no data class offered for the mention @here.
	path := filepath.Join(t.TempDir(), "here.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(kelpPolicy, "data_classes: [brine, silt]", "data_classes: [brine, here]", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	h2 := newHarnessOn(t, path)
	if r := h2.say("mara@kelp.example", "/gpu request 1 tidal data @here"); !r.Error || strings.Contains(r.Text, "data here") {
		t.Errorf("@here answered %q; want it refused without offering here", r.Text)
	}
}
