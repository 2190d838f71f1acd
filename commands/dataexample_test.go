package commands

import (
	"strings"
	"testing"
)

// A request whose data class is missing or cannot be one was refused with "such as internal", a
// data class of the example policy. On a policy with other data classes the refusal names none of
// the example's, its example names the asker's own team's first data class, and that example, typed
// as given, is no refusal.
func TestADataClassRefusalNamesTheTeamsDataClass(t *testing.T) {
	for _, ask := range []string{"/gpu request 1 dev for 1h data", `/gpu request 1 dev for 1h data "two words"`} {
		h := newHarnessOn(t, otherPolicy)
		r := h.say("rita@borealis.example", ask)
		if strings.Contains(r.Text, "internal") {
			t.Errorf("%s: the refusal names a data class the policy does not have: %s", ask, r.Text)
		}
		ex := exampleIn(t, r)
		if !strings.HasSuffix(ex, " data open") {
			t.Errorf("%s: the refusal's example is %q, want one naming the team's data class open", ask, ex)
		}
		if r := h.say("rita@borealis.example", ex); r.Error {
			t.Errorf("the example %q as given: %s", ex, r.Text)
		}
	}
}
