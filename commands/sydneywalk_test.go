package commands

import (
	"testing"
	"time"
)

const sydneyPolicy = "testdata/sydney.yaml"

// Request again leaves out the data class where a request leaving it out gets the same one: for a
// team the policy lists without data classes, and for one it does not list, that is public.
func TestRequestAgainLeavesOutPublicWhereItIsTheDefault(t *testing.T) {
	for _, user := range []string{"bo@wattle.example", "nia@wattle.example"} {
		h := newHarnessOn(t, sydneyPolicy)
		mustOK(t, h.say(user, "/gpu request 1 notebook for 1h"))
		h.advance(90 * time.Minute)
		again := againIn(t, h.notices(user))
		if again != "/gpu request 1 notebook for 1h" {
			t.Errorf("%s: Request again is %q; want /gpu request 1 notebook for 1h", user, again)
		}
	}
}
