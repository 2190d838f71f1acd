package commands

import (
	"slices"
	"strings"
	"testing"
)

// "data" followed by one of the request's own words (for, team, template, exclusive) has left its
// data class out: it is refused as a data left empty is, and the word after it is read as what it
// is, so the example keeps the rest of the request. Before, the word was taken as the data class:
// "data for 2h" asked for data class "for", and "data team reef" gave an example asking for data
// class "team".
func TestADataFollowedByARequestWordHasNoDataClass(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	for _, tc := range []struct{ ask, keeps string }{
		{"request 1 tidal data for 2h", "for 2h"},
		{"request 1 tidal for 3h data exclusive", "for 3h"},
		{"request 1 tidal for 2h data team reef", "team reef"},
		{"request 1 tidal for 90m data template lagoon-lab", "template lagoon-lab"},
		{"request 1 tidal for 2h data reservation", "for 2h"},
	} {
		got := h.say(who, "/gpu "+tc.ask)
		msg, _, _ := strings.Cut(got.Text, " Example: ")
		if !got.Error || !strings.Contains(msg, `"data" must be followed by a data class.`) {
			t.Errorf("/gpu %s answered %q; want it refused for its missing data class", tc.ask, got.Text)
			continue
		}
		ex := exampleOf(t, got.Text)
		for _, w := range []string{"for", "team", "template", "exclusive", "reservation"} {
			if strings.Contains(ex, "data "+w) {
				t.Errorf("/gpu %s: its example /gpu %s asks for data class %q", tc.ask, ex, w)
			}
		}
		if !strings.Contains(ex, tc.keeps) {
			t.Errorf("/gpu %s: its example /gpu %s does not keep %q", tc.ask, ex, tc.keeps)
		}
	}
	if list := h.say(who, "/gpu list"); strings.Contains(list.PlainText(), "L-") {
		t.Errorf("the refused requests made leases: %s", list.PlainText())
	}
}

// The same in a submit: "data for", "data team=reef" leave the data class out, and the word after
// it is read as itself; before, the job was submitted under data class "for".
func TestASubmitsDataFollowedByACommandWordHasNoDataClass(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	for _, ask := range []string{"submit depth-probe size=128 data for", "submit depth-probe data team=reef size=128", "submit depth-probe data for=2h", "submit depth-probe data exclusive"} {
		got := h.say(who, "/gpu "+ask)
		msg, _, _ := strings.Cut(got.Text, " Example: ")
		if !got.Error || !strings.Contains(msg, `"data" must be followed by a data class.`) {
			t.Errorf("/gpu %s answered %q; want it refused for its missing data class", ask, got.Text)
			continue
		}
		ex := exampleOf(t, got.Text)
		if f := strings.Fields(ex); len(f) > 0 && (slices.Contains(f, "for") || slices.Contains(f, "exclusive")) {
			t.Errorf("/gpu %s: its example /gpu %s asks for a data class of a command word", ask, ex)
		}
		if again := h.say(who, "/gpu "+ex); again.Error {
			t.Errorf("/gpu %s: its example /gpu %s answered %q", ask, ex, again.Text)
		}
	}
}
