package commands

import "testing"

// An extension written length first (extend 90m L-1) is refused saying the lease id goes first,
// and its example is the extension typed, in that order; before, the length was "not a lease id"
// and the example offered another length.
func TestAnExtensionWrittenLengthFirstKeepsWhatWasTyped(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	id := leaseIn(t, h.say(who, "/gpu request 1 tidal for 1h").Text)
	for _, tc := range []struct{ ask, example string }{
		{"extend 90m " + id.String(), "extend " + id.String() + " 1h30m"},
		{"extend 1h 30m " + id.String(), "extend " + id.String() + " 1h30m"},
		{"extend 3h " + id.String(), "extend " + id.String() + " 3h"},
		{"extend +90m " + id.String(), "extend " + id.String() + " 1h30m"},
		{"extend 2h. " + id.String(), "extend " + id.String() + " 2h"},
	} {
		refusedAs(t, h, who, tc.ask, "/gpu extend names the lease id first", tc.example)
	}
}
