package commands

import "testing"

// A quota request whose reason is written without the word because (+2 tidal deadline) is told
// that a reason follows because, with the request and the words typed as its reason as the
// example; before, the reason was read as a length ("deadline" is not a duration).
func TestAQuotaRequestsReasonWithoutBecauseIsSaidToNeedIt(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	for _, tc := range []struct{ ask, example string }{
		{"quota request +2 tidal deadline", "quota request +2 tidal because deadline"},
		{"quota request +1 abyss for 3d the ablations", "quota request +1 abyss for 3d because the ablations"},
		{"quota request +1 tidal team reef poster session", "quota request +1 tidal team reef because poster session"},
	} {
		refusedAs(t, h, who, tc.ask, "a quota request's reason follows the word because", tc.example)
	}
}
