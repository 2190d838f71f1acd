package commands

import "testing"

// An estimate followed by a word it does not take ("2h soon") or by a second duration ("2h 3h")
// is refused naming that word, as a request is, and its example keeps the duration typed; before,
// the whole tail was quoted as one duration that did not read ("2h soon" is not a duration) and
// the example offered some other length.
func TestAnEstimateWithTrailingWordsNamesThem(t *testing.T) {
	h := kelpOn(t)
	for _, tc := range []struct{ ask, says, example string }{
		{"estimate 1 tidal 90m soon", `"soon" is not part of an estimate`, "estimate 1 tidal 1h30m"},
		{"estimate 2 tidal 3h please now", `"please now" is not part of an estimate`, "estimate 2 tidal 3h"},
		{"estimate 1 tidal for 2d asap exclusive", `"asap" is not part of an estimate`, "estimate 1 tidal 2d exclusive"},
		{"estimate 1 tidal 2h 3h", "The estimate names its duration twice; give it once.", "estimate 1 tidal 2h"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
	}
}
