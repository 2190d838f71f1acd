package commands

import "testing"

// A quota request whose "because" has a mark after it ("because:", "because,", "because -") is
// taken as written: the rest is its reason, kept without the mark, as approvers see it. Before,
// it was refused.
func TestAQuotaRequestWithAMarkAfterBecauseKeepsItsReason(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	for _, tc := range []struct{ ask, reason string }{
		{"quota request +2 tidal because: poster session", "poster session"},
		{"quota request +1 abyss for 3d because, the ablations", "the ablations"},
		{"quota request +1 tidal team reef because - a rerun", "a rerun"},
		{"quota request +1 abyss Because : a rerun: twice", "a rerun: twice"},
	} {
		got := h.say(who, "/gpu "+tc.ask)
		if got.Error {
			t.Errorf("/gpu %s was refused: %q", tc.ask, got.Text)
			continue
		}
		l := h.lease(leaseIn(t, got.Text))
		if l.Because != tc.reason {
			t.Errorf("/gpu %s asked because %q; want %q", tc.ask, l.Because, tc.reason)
		}
		h.say(who, "/gpu cancel "+l.ID.String())
	}
}
