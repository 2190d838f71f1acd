package commands

import (
	"strings"
	"testing"
)

// A duration of 0 (which needs no unit) is refused as no length of time, not as something that
// is not a duration, with one that works.
func TestAZeroDurationIsRefusedAsNoLengthOfTime(t *testing.T) {
	for _, in := range []string{"/gpu request 1 l4 for 0", "/gpu request 1 l4 for 0m", "/gpu extend L-1 0", "/gpu estimate 1 l4 0h", "/gpu submit cuda-smoke for=0",
		"/gpu quota request +1 l4 for 0 because x"} {
		_, err := Parse(in)
		if err == nil {
			t.Errorf("%s is accepted", in)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "is not a duration") || !strings.Contains(msg, "no length of time") {
			t.Errorf("%s: %q, want it refused as no length of time", in, msg)
		}
	}
}
