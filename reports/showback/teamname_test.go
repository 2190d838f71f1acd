package showback_test

import (
	"context"
	"testing"

	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/reports/showback"
)

// formerTeams is a history with a team that the policy no longer lists.
type formerTeams struct{ fixedSource }

func (formerTeams) LeaseTeams(context.Context) ([]string, error) { return []string{"kiosk-lab"}, nil }

// A team the policy no longer lists is named for a report as a listed one is: A to Z case
// aside, no other letter folded. "KIOSK-LAB" names it; "\u212aiosk-lab" (a Kelvin sign) and
// "k\u0130osk-lab" (a dotted capital İ) do not.
func TestAFormerTeamIsNamedOnlyAToZCaseAside(t *testing.T) {
	p, err := policy.Load(docs.ExamplePolicy, docs.ExamplePolicyName)
	if err != nil {
		t.Fatal(err)
	}
	svc := &showback.Service{Policy: p, Source: formerTeams{}}
	if got, err := svc.ResolveTeam(context.Background(), "KIOSK-LAB"); err != nil || got != "kiosk-lab" {
		t.Errorf("KIOSK-LAB = %q, %v", got, err)
	}
	for _, name := range []string{"\u212aiosk-lab", "k\u0130osk-lab"} {
		if got, err := svc.ResolveTeam(context.Background(), name); err == nil {
			t.Errorf("%q names team %q", name, got)
		}
	}
}
