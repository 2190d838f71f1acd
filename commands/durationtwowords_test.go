package commands

import "testing"

// A length written over two words as people often write it (1h 30, with the minutes a bare
// number; 1,5 h, with a decimal comma and the unit apart) or as a clock does (1:30) is refused
// as the one-word forms (1h30, 1,5h) are, with the length meant in the example, wherever a
// duration goes; before, 1h 30 was taken as 1h and its 30 called out of place, and 1,5 h and
// 1:30 were given 4h or 2h as the example.
func TestALengthWrittenOverTwoWordsOrAsAClockKeepsItsLength(t *testing.T) {
	h := kelpOn(t)
	id := leaseIn(t, h.say("mara@kelp.example", "/gpu request 1 tidal for 1h").Text)
	for _, tc := range []struct{ ask, says, example string }{
		{"request 1 tidal for 1h 30", `"1h 30" is not a duration; write it like 1h30m.`, "request 1 tidal for 1h30m"},
		{"request 1 tidal 2h 15 team reef", `"2h 15" is not a duration; write it like 2h15m.`, "request 1 tidal for 2h15m team reef"},
		{"request 1 tidal for 1 h 30 data silt", `"1 h 30" is not a duration; write it like 1h30m.`, "request 1 tidal for 1h30m data silt"},
		{"request 1 tidal for 1,5 h", `"1,5 h" is not a duration; write it like 1.5h.`, "request 1 tidal for 1h30m"},
		{"request 1 tidal for 1:30", `"1:30" is not a duration; write it like 1h30m.`, "request 1 tidal for 1h30m"},
		{"request 1 tidal 1:45 exclusive", `"1:45" is not a duration; write it like 1h45m.`, "request 1 tidal for 1h45m exclusive"},
		{"estimate 1 abyss 1h 30", `"1h 30" is not a duration; write it like 1h30m.`, "estimate 1 abyss 1h30m"},
		{"estimate 1 tidal 1,5 h", `"1,5 h" is not a duration; write it like 1.5h.`, "estimate 1 tidal 1h30m"},
		{"estimate 1 tidal 2:05", `"2:05" is not a duration; write it like 2h05m.`, "estimate 1 tidal 2h5m"},
		{"extend " + id.String() + " 1h 30", `"1h 30" is not a duration; write it like 1h30m.`, "extend " + id.String() + " 1h30m"},
		{"extend " + id.String() + " 0:45", `"0:45" is not a duration; write it like 45m.`, "extend " + id.String() + " 45m"},
		{"submit depth-probe size=128 for=1h 30", `"for=1h 30" is not a duration; write it like for=1h30m.`, "submit depth-probe for=1h30m size=128"},
		{"submit depth-probe for=1,5 h size=128", `"for=1,5 h" is not a duration; write it like for=1.5h.`, "submit depth-probe for=1h30m size=128"},
		{"submit depth-probe for=1:30", `"for=1:30" is not a duration; write it like for=1h30m.`, "submit depth-probe for=1h30m"},
		{"extend " + id.String() + " 1h 30 team reef", `"1h 30" is not a duration; write it like 1h30m.`, "extend " + id.String() + " 1h30m"},
		{"submit depth-probe for 1h 30 size=128", `/gpu submit writes for=1h30m.`, "submit depth-probe for=1h30m size=128"},
		{"quota request +2 tidal for 1,5 d because poster session", `"1,5 d" is not a duration; write it like 1.5d.`, "quota request +2 tidal for 1d12h because poster session"},
		{"quota request +2 tidal for 3:30 because poster session", `"3:30" is not a duration; write it like 3h30m.`, "quota request +2 tidal for 3h30m because poster session"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
	}
	// A number after the length where the GPUs go is the GPUs, not its minutes.
	for _, ask := range []string{"request for 2h 1 tidal", "request for 1h 2 abyss team reef", "request 1 tidal for 1h 30m"} {
		mustOK(t, h.say("mara@kelp.example", "/gpu "+ask))
	}
}
