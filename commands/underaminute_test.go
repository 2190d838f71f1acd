package commands

import (
	"strings"
	"testing"
)

// A length shorter than a minute that is not zero (for 0.0001h, 20s) is refused quoting what was
// typed and saying that a minute is the shortest length, with an example that works; before, it
// was refused as "not 0s", a length nobody typed.
func TestALengthUnderAMinuteIsRefusedAsTyped(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	id := leaseIn(t, mustOK(t, h.say(who, "/gpu request 1 tidal for 1h")).Text).String()
	for _, tc := range []struct{ ask, typed, example string }{
		{"request 1 tidal for 0.0001h", "0.0001h", "request 1 tidal for 4h"},
		{"request 2 abyss for 20s", "20s", "request 2 abyss for 4h"},
		{"estimate 1 tidal 0.001m", "0.001m", "estimate 1 tidal 4h"},
		{"extend " + id + " 0.0001h", "0.0001h", "extend " + id + " 2h"},
	} {
		refusedAs(t, h, who, tc.ask, `"`+tc.typed+`" is shorter than a minute, the shortest length accepted`, tc.example)
		if got := h.say(who, "/gpu "+tc.ask); strings.Contains(got.Text, "0s") && !strings.Contains(tc.typed, "0s") {
			t.Errorf("/gpu %s answered %q, naming a length not typed", tc.ask, got.Text)
		}
	}
	// A quota increase lasts an hour at least.
	refusedAs(t, h, who, "quota request +1 tidal for 0.0001h because a rerun", `"0.0001h" is shorter than an hour, the shortest length accepted`, "quota request +1 tidal because a rerun")
}
