package commands

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A report of a team that does not exist, in any of the report's forms, is refused in one
// sentence whose example is a report the asker may really see: a platform admin is told every
// team and shown one; a budget owner is told and shown only the teams they own; anyone else, who
// sees only their own use, is told no team at all, so no one learns the names of teams they may
// not see the showback of.
func TestAReportOfNoTeamNamesOnlyTheTeamsTheAskerSees(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	p := h.svc.Policy
	admin := p.Approvals.FallbackApprovers[0]
	owner := p.Teams[1].BudgetOwners[0]
	var member string
	for _, u := range []string{"rita@borealis.example", "sam@borealis.example"} {
		if len(h.svc.OwnedTeams(t.Context(), u)) == 0 && !h.svc.IsPlatformAdmin(t.Context(), u) {
			member = u
		}
	}
	for _, u := range []string{member, owner} {
		if r := h.say(u, "/gpu request 1 dev for 1h"); r.Error {
			t.Fatalf("%s: %s", u, r.Text)
		}
	}
	h.advance(8 * 24 * time.Hour) // a complete week with use in it
	for _, user := range []string{member, owner, admin} {
		seen := map[string]bool{}
		for _, team := range p.Teams {
			seen[team.Name] = h.svc.IsPlatformAdmin(t.Context(), user)
		}
		for _, team := range h.svc.OwnedTeams(t.Context(), user) {
			seen[team] = true
		}
		for _, line := range []string{
			"/gpu report last week #nowhere", "/gpu report #nowhere", "/gpu report nowhere",
			"/gpu report 2026-W49 nowhere", "/gpu report this week #nowhere", "/gpu report #nowhere last week",
		} {
			typed := strings.Fields(line)[2]
			if strings.HasPrefix(typed, "20") || typed == "last" || typed == "this" {
				typed = strings.Fields(line)[len(strings.Fields(line))-1]
			}
			refusedWithAWorkingExample(t, h, user, line, `"`+typed+`"`)
			r := h.say(user, line)
			if !strings.Contains(r.Text, "team") {
				t.Errorf("%s: %s: %q does not say it is no team", user, line, r.Text)
			}
			_, ex, _ := strings.Cut(r.Text, " Example: ")
			for team, sees := range seen {
				named := regexp.MustCompile(`\b` + regexp.QuoteMeta(team) + `\b`).MatchString(r.Text)
				if named && !sees {
					t.Errorf("%s: %s: %q names team %s, whose showback they do not see", user, line, r.Text, team)
				}
			}
			if owned := h.svc.OwnedTeams(t.Context(), user); len(owned) > 0 && !h.svc.IsPlatformAdmin(t.Context(), user) && !strings.HasSuffix(ex, " "+owned[0]) {
				t.Errorf("%s: %s: example %q; want a report of their team %s", user, line, ex, owned[0])
			}
			if h.svc.IsPlatformAdmin(t.Context(), user) {
				for _, team := range p.Teams {
					if !strings.Contains(r.Text, team.Name) {
						t.Errorf("%s: %s: %q; a platform admin is told every team, %s too", user, line, r.Text, team.Name)
					}
				}
			}
		}
	}
}
