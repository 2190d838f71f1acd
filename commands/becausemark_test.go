package commands

import "testing"

// A quota request whose "because" has a mark after it ("because:", "because,") is refused saying
// so, with the request typed, reason and all, as its example; before, the reason was read as a
// length ("because: poster session" is not a duration) and the example gave another reason.
func TestAQuotaRequestWithAMarkAfterBecauseKeepsItsReason(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	for _, tc := range []struct{ ask, example string }{
		{"quota request +2 tidal because: poster session", "quota request +2 tidal because poster session"},
		{"quota request +1 abyss for 3d because, the ablations", "quota request +1 abyss for 3d because the ablations"},
	} {
		refusedAs(t, h, who, tc.ask, "a quota request writes because alone before its reason.", tc.example)
	}
}
