package commands

import "testing"

// A duration that ends a sentence or a clause ("for 2h.", "3h,", "90m!") is refused as the
// duration it is, with that duration in the example; before, the example offered another length.
func TestADurationWithAStopAfterItKeepsItsLength(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	id := leaseIn(t, h.say(who, "/gpu request 1 tidal for 1h").Text)
	for _, tc := range []struct{ ask, says, example string }{
		{"request 1 tidal for 5h.", `"5h." is not a duration; write it like 5h.`, "request 1 tidal for 5h"},
		{"request 1 tidal for 3h, team reef", `"3h," is not a duration; write it like 3h.`, "request 1 tidal for 3h team reef"},
		{"estimate 2 tidal 90m!", `"90m!" is not a duration; write it like 90m.`, "estimate 2 tidal 1h30m"},
		{"extend " + id.String() + " 2h;", `"2h;" is not a duration; write it like 2h.`, "extend " + id.String() + " 2h"},
		{"submit depth-probe for=6h.", `"for=6h." is not a duration; write it like for=6h.`, "submit depth-probe for=6h"},
	} {
		refusedAs(t, h, who, tc.ask, tc.says, tc.example)
	}
}
