package showback_test

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/reports/showback"
)

// On a policy of one team, a report for a team that does not exist names the one there is in a
// sentence that agrees with it: "the team is robotics", not "the teams are robotics".
func TestAnUnknownTeamOfOneIsNamedInTheSingular(t *testing.T) {
	p, err := policy.LoadFile("../../commands/testdata/orbit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Teams) != 1 {
		t.Fatalf("orbit.yaml has %d teams, want 1", len(p.Teams))
	}
	svc := &showback.Service{Policy: p, Source: fixedSource{}}
	_, err = svc.ResolveTeam(context.Background(), "ghost")
	if want := "; the team is " + p.Teams[0].Name + "."; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("an unknown team: %v; want it to say %q", err, want)
	}
}
