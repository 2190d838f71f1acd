package commands

import (
	"strings"
	"testing"
	"time"
)

// Someone in two teams asks for more quota for either, naming it as a request does (team T),
// and the increase goes to that team's budget owners; naming a team they are not in is refused
// with their teams.
func TestAQuotaRequestNamesOneOfTheAskersTeams(t *testing.T) {
	c, err := Parse("/gpu quota request +2 l4 for 2d team nlp-core because a deadline")
	if err != nil || c.GPUs != 2 || c.Class != "l4" || c.Team != "nlp-core" || c.Duration != 48*time.Hour || c.Reason != "a deadline" {
		t.Fatalf("= %+v, %v", c, err)
	}
	p := policyVariant(t, otherPolicy, "  - {user: ops@borealis.example, groups: [ops]}",
		"  - {user: ops@borealis.example, groups: [ops]}\n  - {user: bea@borealis.example, groups: [grp-robotics, grp-speech]}")
	h := newHarnessOn(t, p)
	r := mustOK(t, h.say("bea@borealis.example", "/gpu quota request +1 dev team Speech because a deadline"))
	if !strings.Contains(r.Text, "for team speech") || !strings.Contains(r.Text, "sven@borealis.example will decide") {
		t.Errorf("a quota request for team speech: %q", r.Text)
	}
	if n := h.notices("sven@borealis.example"); len(n) == 0 {
		t.Errorf("speech's budget owner was not asked")
	}
	r = h.say("bea@borealis.example", "/gpu quota request +1 dev team vision because a deadline")
	if !r.Error || !strings.Contains(r.Text, "not a member of team vision") {
		t.Errorf("a quota request for a team bea is not in: %q", r.Text)
	}
}
