package commands

import (
	"regexp"
	"strings"
	"testing"
)

// The approval message reads as a sentence when what is asked ends in a clause: the GPUs rounded
// up to whole nodes ("…, which takes 2 whole nodes of 4 GPUs = 8 GPUs, as L-1.") and a quota
// request's reason ("… because a deadline, as L-2."), with a comma before the lease it is, so
// the lease is not read as part of the clause.
func TestTheApprovalMessageSetsTheLeaseApartFromAClause(t *testing.T) {
	h := tokyoHarness(t)
	rounded := leaseIn(t, mustOK(t, h.say(haru, "/gpu request 6 a100-big for 4h")).Text).String()
	quota := leaseIn(t, mustOK(t, h.say(haru, "/gpu quota request +1 jupyter for 1d because a deadline")).Text).String()
	want := map[string]*regexp.Regexp{
		rounded: regexp.MustCompile(`= \d+ GPUs, as ` + rounded + `\.`),
		quota:   regexp.MustCompile(`because a deadline, as ` + quota + `\.`),
	}
	seen := map[string]bool{}
	for _, n := range h.notices(kenji) {
		for id, re := range want {
			if strings.HasPrefix(n.Text, "Approval needed") && strings.Contains(n.Text, id+".") {
				seen[id] = true
				if !re.MatchString(n.Text) {
					t.Errorf("the approval message of %s reads %q; want %s", id, n.Text, re)
				}
			}
		}
	}
	if len(seen) != 2 {
		t.Fatalf("approval messages seen for %v, want %s and %s", seen, rounded, quota)
	}
}
