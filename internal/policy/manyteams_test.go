package policy

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// A policy with tens of thousands of teams and directory entries (within the size a policy file
// may have) is checked in about the time it takes to read: finding the team names and directory
// groups that look alike goes through each name once, not through every pair. Before, policy
// check on 50,000 teams compared more than a billion pairs and ran for ten minutes. What it warns of is unchanged: the one team that looks like another, the one group that
// looks like a team it does not join.
func TestAPolicyOfManyTeamsIsCheckedOnceThrough(t *testing.T) {
	good, err := os.ReadFile("../../commands/testdata/other.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const n = 50000
	var teams, people strings.Builder
	for i := range n {
		fmt.Fprintf(&teams, "  - {name: crew-%d, idp_groups: [grp-crew-%d], budget_owners: [ops@borealis.example]}\n", i, i)
		if i < 40000 {
			fmt.Fprintf(&people, "  - {user: p%d@borealis.example, groups: [grp-crew-%d]}\n", i, i)
		}
	}
	teams.WriteString("  - {name: crevv-7, idp_groups: [grp-crevv], budget_owners: [ops@borealis.example]}\n") // looks like crew-7
	people.WriteString("  - {user: q@borealis.example, groups: [crew_9]}\n")                                   // looks like team crew-9, joins no team
	src := strings.Replace(string(good), "\nexceptions:\n", "\n"+teams.String()+"exceptions:\n", 1)
	src = strings.Replace(src, "\nsim:\n", "\n"+people.String()+"sim:\n", 1)
	if !strings.Contains(src, "crew-49999") || !strings.Contains(src, "p39999@") || len(src) > MaxFileSize {
		t.Fatalf("the policy of %d bytes does not hold the teams and people, or is larger than a policy file may be", len(src))
	}
	p, err := Load([]byte(src), "borealis.yaml")
	if err != nil {
		t.Fatalf("%.2000v", err)
	}
	var looks []string
	for _, w := range p.Warnings {
		if strings.Contains(w.Msg, "looks like") {
			looks = append(looks, w.Msg)
		}
	}
	if len(looks) != 2 || !strings.Contains(looks[0], "team crevv-7 looks like team crew-7") || !strings.Contains(looks[1], `group "crew_9" looks like the name of team crew-9`) {
		t.Errorf("look-alike warnings: %q", looks)
	}
}
