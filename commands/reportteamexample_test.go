package commands

import (
	"strings"
	"testing"
)

// /gpu report TEAM in the first week of the history, when the last complete week (the one a
// report without a week shows) has no history yet, shows that team's week so far, said to be not
// yet complete: that team, not every team of the asker.
func TestAReportOfATeamBeforeTheHistoryShowsThatTeamsWeekSoFar(t *testing.T) {
	h, svc := lumenReports(t)
	mustOK(t, h.say("uma@lumen.example", "/gpu request 1 lathe for 1h"))
	week := svc.ExampleWeek(t.Context()).String()
	for user, team := range map[string]string{"odile@lumen.example": "photon", "ops@lumen.example": "photon", "piet@lumen.example": "prism"} {
		r := h.say(user, "/gpu report "+team)
		if r.Error || !strings.Contains(r.Text, "not yet complete") || !strings.Contains(r.Text, "showback of team "+team+", "+week) {
			t.Errorf("%s: /gpu report %s in the history's first week: %q; want team %s's %s so far", user, team, r.Text, team, week)
		}
	}
}
