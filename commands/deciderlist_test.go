package commands

import (
	"strings"
	"testing"
)

// Where three or more decide a request, the requester reads them as English lists them, commas
// between and "or" before the last ("a, b or c"), not "a or b or c".
func TestThreeDecidersReadAsAList(t *testing.T) {
	h := newHarnessOn(t, "testdata/kolkata.yaml")
	owners, _ := h.svc.Policy.Team("genomics-2")
	if len(owners.BudgetOwners) < 3 {
		t.Fatalf("the test needs a team of three budget owners: %v", owners.BudgetOwners)
	}
	r := h.say("ayu@kestrel.example", "/gpu request 4 nb-t4 for 1h")
	_, after, _ := strings.Cut(r.Text, ", so ")
	who, _, ok := strings.Cut(after, " will decide")
	if !ok {
		t.Fatalf("%q does not say who will decide", r.Text)
	}
	if strings.Count(who, " or ") != 1 || !strings.HasPrefix(who, owners.BudgetOwners[0]+", "+owners.BudgetOwners[1]+" or ") {
		t.Errorf("who will decide reads %q; want %s, %s or …", who, owners.BudgetOwners[0], owners.BudgetOwners[1])
	}
}
