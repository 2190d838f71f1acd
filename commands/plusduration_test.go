package commands

import "testing"

// A duration written with a + before it, as the amount to add ("extend L-1 +1h"), is refused
// naming the + and with the duration typed in the example, wherever a duration goes; before, it
// was "not a duration" and the example offered another length.
func TestADurationWithAPlusKeepsItsLength(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	id := leaseIn(t, h.say(who, "/gpu request 1 tidal for 1h").Text)
	for _, tc := range []struct{ ask, example string }{
		{"extend " + id.String() + " +90m", "extend " + id.String() + " 1h30m"},
		{"extend " + id.String() + " ＋3h", "extend " + id.String() + " 3h"},
		{"request 1 tidal for +5h", "request 1 tidal for 5h"},
		{"estimate 2 tidal +3h", "estimate 2 tidal 3h"},
		{"submit depth-probe for=+2h", "submit depth-probe for=2h"},
	} {
		refusedAs(t, h, who, tc.ask, "a duration is written without one", tc.example)
	}
}
