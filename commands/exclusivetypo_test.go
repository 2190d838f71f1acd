package commands

import (
	"strings"
	"testing"
)

// TestAMistypedExclusiveIsPutRight: "/gpu request 1 h200-sxm for 2h exclusiv" was refused as a
// word a request does not take, to be left out, with an example without it: typed back, it asked
// for GPUs others may share, not the whole node meant. A word a letter or two off exclusive (or
// reservation) is answered with the word meant, and the example keeps it.
func TestAMistypedExclusiveIsPutRight(t *testing.T) {
	h := newHarnessOn(t, stJohnsPolicy)
	for _, typo := range []string{"exclusiv", "exlcusive", "Exclusve", "reservaton"} {
		r := h.say("jón@lab.example", "/gpu request 1 h200-sxm for 2h "+typo)
		msg, ex, ok := strings.Cut(r.Text, " Example: ")
		if !r.Error || !ok || !strings.Contains(msg, "did you mean exclusive?") || ex != "/gpu request 1 h200-sxm for 2h exclusive" {
			t.Errorf("%s: %q; want it refused with did you mean exclusive? and the request with exclusive", typo, r.Text)
			continue
		}
		r = h.say("jón@lab.example", ex)
		if r.Error || !strings.Contains(r.Text, "exclusive") {
			t.Errorf("the example %s: %q", ex, r.Text)
			continue
		}
		mustOK(t, h.say("jón@lab.example", "/gpu cancel "+leaseIn(t, r.Text).String()))
	}
}
