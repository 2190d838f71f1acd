package commands

import "testing"

// /gpu submit with team=, for=, class= or gpus= (or data) given twice is refused with the job as
// typed for its example, the key given once with its first value, as a request that names its
// team twice keeps the first.
func TestASubmitGivenAKeyTwiceKeepsWhatWasTyped(t *testing.T) {
	h := kelpOn(t)
	for _, tc := range []struct{ ask, says, example string }{
		{"submit depth-probe size=128 class=tidal team=kelp-forest team=reef for=1h", "gives team= twice", "submit depth-probe size=128 class=tidal team=kelp-forest for=1h"},
		{"submit depth-probe class=tidal for=1h size=256 for=2h", "gives for= twice", "submit depth-probe class=tidal for=1h size=256"},
		{"submit depth-probe for=1h 30m size=128 for=2h 15m class=tidal", "gives for= twice", "submit depth-probe for=1h 30m size=128 class=tidal"},
		{"submit depth-probe gpus=2 class=tidal gpus=3 size=128", "gives gpus= twice", "submit depth-probe gpus=2 class=tidal size=128"},
		{"submit depth-probe size=128 data silt team=reef data brine", "gives its data class twice", "submit depth-probe size=128 data silt team=reef"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
	}
}
