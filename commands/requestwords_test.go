package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
)

// TestRequestWordsAreNoClassNames: every word the policy refuses as a class name is one the
// grammar reads as something else, and every keyword of /gpu request and /gpu quota request is
// among them: the policy's list and the grammar agree.
func TestRequestWordsAreNoClassNames(t *testing.T) {
	for w := range policy.RequestWords {
		r, rerr := Parse("/gpu request 1 " + w + " 2h")
		q, qerr := Parse("/gpu quota request +1 " + w + " because " + w)
		if rerr == nil && r.Class == w && qerr == nil && q.Class == w {
			t.Errorf("%q reads as a class in /gpu request and /gpu quota request", w)
		}
	}
	for _, name := range []string{"request", "quota-request"} {
		s, _ := Lookup(name)
		for _, p := range s.Params {
			k := strings.TrimRight(p.Keyword, "=+")
			if _, ok := policy.RequestWords[k]; k != "" && !ok {
				t.Errorf("/gpu %s's keyword %q may name a class", s.Name, k)
			}
		}
	}
}
