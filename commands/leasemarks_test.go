package commands

import (
	"strings"
	"testing"
)

// A lease id with a mark around it, as a sentence or a paste leaves one ("L-1.", "(L-1)", "`L-1`",
// "L-1,"), is refused naming the id without it, and the example names that lease, not another:
// before, the example named the asker's latest lease, so typing it back released or extended a
// lease other than the one typed.
func TestALeaseIdWithAMarkAroundItKeepsItsLease(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	first := leaseIn(t, h.say(who, "/gpu request 1 tidal for 1h").Text)
	leaseIn(t, h.say(who, "/gpu request 1 tidal for 2h").Text)
	leaseIn(t, h.say(who, "/gpu request 1 tidal for 3h").Text)
	id := first.String()
	for _, tc := range []struct{ ask, example string }{
		{"release " + id + ".", "release " + id},
		{"release (" + id + ")", "release " + id},
		{"status `" + id + "`", "status " + id},
		{"extend " + id + ", 90m", "extend " + id + " 1h30m"},
		{"keep <" + id + ">", "keep " + id},
	} {
		got := h.say(who, "/gpu "+tc.ask)
		msg, _, _ := strings.Cut(got.Text, " Example: ")
		if !got.Error || !strings.Contains(msg, "write it without the marks around it: "+id+".") {
			t.Errorf("/gpu %s answered %q; want it refused naming %s", tc.ask, got.Text, id)
			continue
		}
		if ex := exampleOf(t, got.Text); ex != tc.example && !(strings.HasPrefix(tc.ask, "keep") && !strings.Contains(ex, "keep")) {
			t.Errorf("/gpu %s: example /gpu %s, want /gpu %s", tc.ask, ex, tc.example)
		}
	}
	if st := h.say(who, "/gpu status "+id); !strings.Contains(st.PlainText(), "active") {
		t.Errorf("a refused command changed %s: %s", id, st.PlainText())
	}
}
