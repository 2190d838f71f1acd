package commands

import (
	"strings"
	"testing"
)

// A user whose groups match no listed team belongs to a team named after their first group, with
// the default quota: /gpu quota shows it, and so does /gpu quota naming it, in any case. Someone
// else naming that team is told there is no such team, as for any name the policy does not list.
func TestQuotaNamesTheUsersOwnUnlistedTeam(t *testing.T) {
	p := policyVariant(t, otherPolicy, "  - {user: ops@borealis.example, groups: [ops]}",
		"  - {user: ops@borealis.example, groups: [ops]}\n  - {user: dina@borealis.example, groups: [Physik-Lab]}")
	h := newHarnessOn(t, p)
	own := mustOK(t, h.say("dina@borealis.example", "/gpu quota")).PlainText()
	if !strings.Contains(own, "Team physik-lab this week") {
		t.Fatalf("/gpu quota says\n%s\nwant team physik-lab's quota", own)
	}
	for _, typed := range []string{"/gpu quota physik-lab", "/gpu quota Physik-Lab"} {
		if got := mustOK(t, h.say("dina@borealis.example", typed)).PlainText(); got != own {
			t.Errorf("%s says\n%s\nwant what /gpu quota says:\n%s", typed, got, own)
		}
	}
	if r := h.say("rita@borealis.example", "/gpu quota physik-lab"); !r.Error || !strings.Contains(r.Text, `There is no team "physik-lab"`) {
		t.Errorf("another team's member naming physik-lab got %q; want that there is no such team", r.Text)
	}
}
