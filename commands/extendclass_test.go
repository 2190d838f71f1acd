package commands

import "testing"

// /gpu extend with a class where the length goes (extend L-1 abyss) is told it named a class, not
// a length, with the lease extended by a length (the one typed after the class, if any) as the
// example; before, the class was called no duration.
func TestAClassWhereAnExtensionsLengthGoesIsNamedAsAClass(t *testing.T) {
	h := kelpOn(t)
	id := leaseIn(t, h.say("mara@kelp.example", "/gpu request 1 tidal for 1h").Text).String()
	for _, tc := range []struct{ ask, example string }{
		{"extend " + id + " abyss", "extend " + id + " 2h"},
		{"extend " + id + " Tidal", "extend " + id + " 2h"},
		{"extend " + id + " tidal 3h", "extend " + id + " 3h"},
		{"extend " + id + " by abyss", "extend " + id + " 2h"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, "is a class, not a length; /gpu extend takes a lease id and how much longer.", tc.example)
	}
}
