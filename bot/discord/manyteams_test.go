package discord_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// A budget owner of every team of a policy of more teams than Discord shows suggestions (25) is
// suggested 25 of them for /gpu quota's team, their own team first though the policy lists it
// last, each name and value within Discord's 100 characters; typing narrows them as it does every
// option's. A request's team is only their own, and the data classes their team's first.
func TestManyTeamsSuggestTheirOwnFirstWithinDiscordsLimits(t *testing.T) {
	var teams, dir strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&teams, "  - {name: basin-%02d, idp_groups: [g-%02d], budget_owners: [ran@fjell.example], quota: {gpus: {myr: 1}, gpu_hours_per_week: 10}, data_classes: [survey-%02d]}\n", i, i, i)
	}
	dir.WriteString(`  - {user: ran@fjell.example, groups: [g-30], accounts: ["discord:830000000000000051"]}` + "\n")
	yaml := `organization: Fjell Survey
currency: NOK
timezone: Europe/Oslo
classes:
  - {name: myr, description: Shared T4, sku: T4, gpu_memory_gib: 16, price_per_gpu_hour: 5, isolation: shared, max_gpus: 2, max_duration: 8h}
default_quota: {gpus: {myr: 1}, gpu_hours_per_week: 4}
teams:
` + teams.String() + `exceptions:
  - {name: not-cleared, when: "!(request.data_class in team.data_classes)", why: Not cleared}
approvals: {timeout: 12h, fallback_approvers: [ran@fjell.example]}
backend: sim
directory:
` + dir.String() + `sim:
  nodes:
    - {name: myr, count: 1, class: myr, gpus: 4}
`
	path := filepath.Join(t.TempDir(), "fjell.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newOnPolicy(t, path, nil)
	ran := "830000000000000051"
	suggested := func(sub, option, typed string) []string {
		t.Helper()
		r := h.send(discordtest.Autocomplete(kin(ran), "gpu", sub, discordtest.Opt{Name: option, Value: typed, Focused: true}))
		var out []string
		for _, c := range r.Data.Choices {
			v, _ := c.Value.(string)
			if utf8.RuneCountInString(c.Name) > 100 || utf8.RuneCountInString(v) > 100 {
				t.Errorf("suggested %q (%q), more than Discord's 100 characters", c.Name, v)
			}
			out = append(out, v)
		}
		return out
	}
	got := suggested("quota", "team", "")
	if len(got) != 25 || got[0] != "basin-30" || got[1] != "basin-01" {
		t.Errorf("/gpu quota team suggests %d teams, %q; want 25, basin-30 (ran's own) first, then basin-01 on", len(got), got)
	}
	if got := suggested("quota", "team", "BASIN-2"); strings.Join(got, " ") != "basin-20 basin-21 basin-22 basin-23 basin-24 basin-25 basin-26 basin-27 basin-28 basin-29" {
		t.Errorf("/gpu quota team:BASIN-2 suggests %q", got)
	}
	if got := suggested("request", "data", ""); len(got) != 25 || got[0] != "survey-30" {
		t.Errorf("/gpu request data suggests %d, %q; want 25, survey-30 (ran's team's) first", len(got), got)
	}
	if got := suggested("request", "team", ""); strings.Join(got, " ") != "basin-30" {
		t.Errorf("/gpu request team suggests %q; want basin-30 alone, the one team a request of ran's may charge", got)
	}
}
