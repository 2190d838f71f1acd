package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// lumenPolicy is a policy of its own for the report's refusals: two teams, a team's channel that
// is not its name, a budget owner, a platform admin and a member who owns no team.
const lumenPolicy = "organization: Lumen Optics\ncurrency: EUR\ntimezone: Europe/Lisbon\nclasses:\n" +
	"  - {name: lathe, sku: L4, price_per_gpu_hour: 0.8, max_gpus: 4, max_duration: 6h}\n" +
	"default_quota: {gpus: {lathe: 1}, gpu_hours_per_week: 10}\nteams:\n" +
	"  - {name: photon, idp_groups: [g-photon], budget_owners: [odile@lumen.example], channel: \"#beam-room\", quota: {gpus: {lathe: 4}, gpu_hours_per_week: 100}}\n" +
	"  - {name: prism, idp_groups: [g-prism], budget_owners: [piet@lumen.example]}\n" +
	"approvals: {timeout: 24h, fallback_approvers: [ops@lumen.example]}\nbackend: sim\ndirectory:\n" +
	"  - {user: uma@lumen.example, groups: [g-photon]}\n  - {user: odile@lumen.example, groups: [g-photon]}\n" +
	"  - {user: piet@lumen.example, groups: [g-prism]}\n  - {user: ops@lumen.example, groups: [ops]}\n" +
	"sim:\n  nodes:\n    - {name: l4, count: 1, class: lathe, gpus: 4}\n"

func lumenReports(t *testing.T) (*harness, *showback.Service) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "lumen.yaml")
	if err := os.WriteFile(file, []byte(lumenPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, file)
	svc := &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock}
	AddReport(h.bot, svc)
	return h, svc
}

// /gpu report WEEK TEAM with a week there is a report of and a team that is not there is refused
// for the team, with an example of the week asked for (and, to whoever may see a team's report, a
// team there is), not of another week; a week before the history is refused for that first.
func TestAReportOfAnUnknownTeamKeepsTheWeekAskedFor(t *testing.T) {
	h, svc := lumenReports(t)
	mustOK(t, h.say("uma@lumen.example", "/gpu request 1 lathe for 1h"))
	h.advance(15 * 24 * time.Hour) // two weeks later: the week of the lease and the one after are complete
	asked := svc.LastComplete().Prev().String()
	if asked == svc.ExampleWeek(t.Context()).String() {
		t.Fatalf("the week asked for, %s, is the example week anyway", asked)
	}
	for user, want := range map[string]string{
		"ops@lumen.example":   "/gpu report " + asked + " photon",
		"piet@lumen.example":  "/gpu report " + asked + " prism",
		"uma@lumen.example":   "/gpu report " + asked,
		"odile@lumen.example": "/gpu report " + asked + " photon",
	} {
		line := "/gpu report " + asked + " ghost"
		refusedWithAWorkingExample(t, h, user, line, `There is no team "ghost"`)
		r := h.say(user, line)
		if _, ex, _ := strings.Cut(r.Text, " Example: "); ex != want {
			t.Errorf("%s: %s: %q; want the example %q", user, line, r.Text, want)
		}
	}
	// A week before the history, with a team that is not there: the week is what is wrong first.
	early := showback.WeekOf(start, h.svc.Policy.Location).Prev().Prev().String()
	r := h.say("ops@lumen.example", "/gpu report "+early+" ghost")
	if want := "There is no history for " + early; !r.Error || !strings.HasPrefix(r.Text, want) || strings.Contains(r.Text, "ghost") {
		t.Errorf("/gpu report %s ghost: %q; want it to start %q", early, r.Text, want)
	}
	refusedWithAWorkingExample(t, h, "ops@lumen.example", "/gpu report "+early+" ghost", "There is no history")
}
