package showback_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/reports/showback"
)

// A budget owner of so many teams that their DM's first line sums them, in a week none of them
// held a GPU: the line says no GPUs were used, so none were idle, as each team's line does, not
// "0.00 GPU-hours (0 XOF), n/a idle".
func TestAnOwnersSumOfTeamsThatUsedNothingSaysNoGPUsUsed(t *testing.T) {
	data, err := os.ReadFile("../../commands/testdata/baobab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yaml := string(data)
	var extra strings.Builder
	var teams []string
	for i := range 24 {
		name := fmt.Sprintf("cooperative-regionale-%02d", i)
		teams = append(teams, name)
		fmt.Fprintf(&extra, "  - name: %s\n    idp_groups: [grp-%02d]\n    budget_owners: [chefs-baobab]\n", name, i)
	}
	yaml = strings.Replace(yaml, "exceptions:\n", extra.String()+"exceptions:\n", 1)
	p, err := policy.Load([]byte(yaml), "baobab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: w.Start(p.Location).AddDate(0, 0, 8)})
	dm := r.OwnerDM("aminata@baobab.example", teams)
	head := dm.Text
	if !strings.Contains(head, "your 24 teams") {
		t.Fatalf("the DM's first line does not sum the 24 teams: %s", head)
	}
	if strings.Contains(head, "n/a") || !strings.Contains(head, "no GPUs used, so none idle") {
		t.Errorf("the sum of 24 teams that used nothing reads:\n%s\nwant it to say no GPUs used, so none idle", head)
	}
}
