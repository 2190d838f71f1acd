package commands

import (
	"strings"
	"testing"
)

// /gpu report TEAM in the first week of the history, when the last complete week (the one a
// report without a week shows) has no history yet, is refused with an example of the week there
// is that keeps the team asked for: typed back it shows that team, not every team of the asker.
func TestAReportOfATeamBeforeTheHistoryKeepsTheTeamInItsExample(t *testing.T) {
	h, svc := lumenReports(t)
	mustOK(t, h.say("uma@lumen.example", "/gpu request 1 lathe for 1h"))
	week := svc.ExampleWeek(t.Context()).String()
	for user, team := range map[string]string{"odile@lumen.example": "photon", "ops@lumen.example": "photon", "piet@lumen.example": "prism"} {
		r := h.say(user, "/gpu report "+team)
		if !r.Error || !strings.HasPrefix(r.Text, "There is no history for") {
			t.Fatalf("%s: /gpu report %s in the history's first week: %q", user, team, r.Text)
		}
		if _, ex, _ := strings.Cut(r.Text, " Example: "); ex != "/gpu report "+week+" "+team {
			t.Errorf("%s: /gpu report %s: %q; want the example /gpu report %s %s", user, team, r.Text, week, team)
		}
		refusedWithAWorkingExample(t, h, user, "/gpu report "+team, "There is no history")
	}
}
