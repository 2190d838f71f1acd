package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// reportOwners are a budget owner of each walk policy's team.
var reportOwners = map[string]string{"ml-infra2": "ingrid@fjord.example", "seismic": "ines@harbor.example"}

// /gpu report reads a team named before its week as the team (team names may hold digits, as
// ml-infra2 does, and still name no week), answers a team typed twice as given twice, and a
// misspelled team that holds a digit as the team meant rather than as a week that is not one.
func TestAReportTakesItsTeamBeforeItsWeekAndTeamsWithDigits(t *testing.T) {
	for _, tc := range walkPolicies {
		t.Run(tc.team, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
			owner := reportOwners[tc.team]
			mustOK(t, h.say(tc.user, "/gpu request 1 "+tc.class+" for 1h"))
			want := mustOK(t, h.say(owner, "/gpu report this week "+tc.team)).Text
			for _, line := range []string{"/gpu report " + tc.team + " this week", "/gpu report " + tc.team + " 2026-W49"} {
				if r := h.say(owner, line); r.Error || r.Text != want {
					t.Errorf("%s: %q; want the report of /gpu report this week %s", line, r.Text, tc.team)
				}
			}
			refusedWithAWorkingExample(t, h, owner, "/gpu report "+tc.team+" "+tc.team, "gives the team twice")
			typo := tc.team[:len(tc.team)-1] + "3"
			refusedWithAWorkingExample(t, h, owner, "/gpu report "+typo, "did you mean "+tc.team+"?")
			refusedWithAWorkingExample(t, h, owner, "/gpu report "+tc.team[:len(tc.team)-1], "did you mean "+tc.team+"?")
			refusedWithAWorkingExample(t, h, owner, "/gpu report this week "+typo, "did you mean "+tc.team+"?")
			if ex := exampleIn(t, h.say(owner, "/gpu report "+typo)); !strings.HasSuffix(ex, " "+tc.team) {
				t.Errorf("/gpu report %s: example %q; want it to name team %s", typo, ex, tc.team)
			}
		})
	}
}
