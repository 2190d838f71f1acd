package commands

import (
	"strings"
	"testing"
	"time"
)

// /gpu report with the week typed twice (2026-W49 2026-W49) is refused as giving the week twice,
// with the report of that week as the example; before, the second was taken for a team: "there is
// no team 2026-W49". Two different weeks are refused as two weeks, with the first's report.
func TestAReportWithItsWeekTwiceSaysSo(t *testing.T) {
	h, svc := lumenReports(t)
	mustOK(t, h.say("uma@lumen.example", "/gpu request 1 lathe for 1h"))
	h.advance(15 * 24 * time.Hour)
	week := svc.LastComplete().String()
	prev := svc.LastComplete().Prev().String()
	for _, user := range []string{"uma@lumen.example", "ops@lumen.example"} {
		for line, says := range map[string]string{
			"/gpu report " + week + " " + week: "gives the week twice; give it once.",
			"/gpu report " + prev + " " + week: "names two weeks; a report is of one week, so give one.",
		} {
			refusedWithAWorkingExample(t, h, user, line, says)
			r := h.say(user, line)
			if _, ex, _ := strings.Cut(r.Text, " Example: "); ex != "/gpu report "+strings.Fields(line)[2] {
				t.Errorf("%s: %s: %q; want the report of the first week as the example", user, line, r.Text)
			}
			if strings.Contains(r.Text, "no team") {
				t.Errorf("%s: %s: %q; a week is no team", user, line, r.Text)
			}
		}
	}
}
