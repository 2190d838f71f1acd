package showback_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/reports/showback"
)

// A team report --team cannot find names the teams as a sentence, all of them where they are
// few ("mako, orca, ray and skate") and a few and how many more where they are many ("mako,
// orca, ray and 3 more").
func TestTheTeamsOfARefusalReadAsASentence(t *testing.T) {
	for n, want := range map[int]string{
		2: "the teams are mako and orca.",
		4: "the teams are mako, orca, ray and skate.",
		6: "the teams are mako, orca, ray and 3 more.",
	} {
		names := []string{"mako", "orca", "ray", "skate", "tope", "wobbegong"}[:n]
		var teams strings.Builder
		for _, name := range names {
			fmt.Fprintf(&teams, "  - {name: %s, idp_groups: [g-%s]}\n", name, name)
		}
		p, err := policy.Load([]byte("organization: Reef\nclasses:\n  - {name: gpu, max_gpus: 1, max_duration: 1h}\nteams:\n"+teams.String()+
			"sim: {nodes: [{name: n, count: 1, class: gpu, gpus: 1}]}\n"), "reef.yaml")
		if err != nil {
			t.Fatal(err)
		}
		svc := &showback.Service{Policy: p, Source: fixedSource{}}
		_, err = svc.ResolveTeam(context.Background(), "zzzzzz")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%d teams: %v; want %q", n, err, want)
		}
	}
}
