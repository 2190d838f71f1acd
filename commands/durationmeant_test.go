package commands

import "testing"

// A duration written as people often write it but the grammar does not (1h30, 1,5h, 1h1h) is
// refused with an example that carries the length meant, written the way that works, wherever a
// duration goes; before, the example asked for another length (4h, 2h). One written the way the
// grammar reads (1.5h, 90min, 2hrs, 1 h) is taken as it is.
func TestADurationWrittenUnusuallyKeepsItsLengthInTheExample(t *testing.T) {
	h := kelpOn(t)
	id := leaseIn(t, h.say("mara@kelp.example", "/gpu request 1 tidal for 1h").Text)
	for _, tc := range []struct{ ask, says, example string }{
		{"request 1 tidal for 1h30", `"1h30" is not a duration; write it like 1h30m.`, "request 1 tidal for 1h30m"},
		{"request 1 tidal 1h30 team reef", `"1h30" is not a duration; write it like 1h30m.`, "request 1 tidal for 1h30m team reef"},
		{"request 1 tidal for 1,5h", `"1,5h" is not a duration; write it like 1.5h.`, "request 1 tidal for 1h30m"},
		{"request 1 tidal 1,5h", `"1,5h" is not a duration; write it like 1.5h.`, "request 1 tidal for 1h30m"},
		{"request 1 tidal for 1h1h", `"1h1h" names hours twice, so how long is unclear;`, "request 1 tidal for 2h"},
		{"request 1 tidal 1h1h data silt", `"1h1h" names hours twice, so how long is unclear;`, "request 1 tidal for 2h data silt"},
		{"request 1 tidal for 1hr30", `"1hr30" is not a duration; write it like 1h30m.`, "request 1 tidal for 1h30m"},
		{"estimate 1 tidal 1h30", `"1h30" is not a duration; write it like 1h30m.`, "estimate 1 tidal 1h30m"},
		{"estimate 1 abyss 1,5h", `"1,5h" is not a duration; write it like 1.5h.`, "estimate 1 abyss 1h30m"},
		{"estimate 1 tidal 1h1h", `"1h1h" names hours twice`, "estimate 1 tidal 2h"},
		{"extend " + id.String() + " 1h30", `"1h30" is not a duration; write it like 1h30m.`, "extend " + id.String() + " 1h30m"},
		{"extend " + id.String() + " 1,5h", `"1,5h" is not a duration; write it like 1.5h.`, "extend " + id.String() + " 1h30m"},
		{"submit depth-probe size=128 for=1h30", `"for=1h30" is not a duration; write it like for=1h30m.`, "submit depth-probe for=1h30m size=128"},
		{"submit depth-probe for=1h1h", `"for=1h1h" names hours twice, so how long is unclear;`, "submit depth-probe for=2h"},
		{"quota request +2 tidal for 1,5d because poster session", `"1,5d" is not a duration; write it like 1.5d.`, "quota request +2 tidal for 1d12h because poster session"},
		{"quota request +2 tidal for 1h1h because poster session", `"1h1h" names hours twice`, "quota request +2 tidal for 2h because poster session"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
	}
	for _, ask := range []string{"request 1 tidal for 1.5h", "request 1 tidal for 90min", "request 1 tidal for 2hrs",
		"request 1 tidal for 1 h", "request 1 tidal 1h30m", "extend " + id.String() + " 90min"} {
		mustOK(t, h.say("mara@kelp.example", "/gpu "+ask))
	}
}
