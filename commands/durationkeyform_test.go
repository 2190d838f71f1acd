package commands

import "testing"

// A job's for= naming a unit twice or out of order (for=1h1h, for=30m1h) is told the length it
// adds up to in the form typed there (like for=2h), as its example gives it; before, the sentence
// said "like 2h", which /gpu submit does not take. A request's for 1h1h still says "like 2h".
func TestAJobsLengthWithAUnitTwiceIsShownAsForEquals(t *testing.T) {
	h := kelpOn(t)
	for _, tc := range []struct{ ask, says, example string }{
		{"submit depth-probe for=1h1h", `"for=1h1h" names hours twice, so how long is unclear; write each unit once, largest first, like for=2h.`, "submit depth-probe for=2h"},
		{"submit depth-probe size=128 for=30m1h", `"for=30m1h" writes minutes before hours, so how long is unclear; write the largest unit first, each once, like for=1h30m.`, "submit depth-probe for=1h30m size=128"},
		{"request 1 tidal for 1h1h", `"1h1h" names hours twice, so how long is unclear; write each unit once, largest first, like 2h.`, "request 1 tidal for 2h"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
	}
}
