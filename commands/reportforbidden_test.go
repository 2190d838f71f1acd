package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// Someone who asks for another team's showback is refused in one sentence with one example, the
// report of their own use for the week they asked for; not told of one week in the sentence and
// shown another in the example.
func TestAnotherTeamsReportIsRefusedWithTheirOwnUseOfThatWeek(t *testing.T) {
	h := newHarness(t)
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	if r := h.say("maya@acme.example", "/gpu request 1 interactive for 1h"); r.Error {
		t.Fatal(r.Text)
	}
	h.advance(8 * 24 * time.Hour) // 2026-W50; 2026-W49 is the last complete week
	for line, week := range map[string]string{"/gpu report this week vision": "2026-W50", "/gpu report 2026-W49 vision": "2026-W49"} {
		refusedWithAWorkingExample(t, h, "maya@acme.example", line, "Only platform admins and the budget owner of team vision (dana@acme.example) see")
		r := h.say("maya@acme.example", line)
		if _, ex, _ := strings.Cut(r.Text, " Example: "); ex != "/gpu report "+week || strings.Count(r.Text, "2026-W") != 1 {
			t.Errorf("%s: %q; want one week named, in the example /gpu report %s", line, r.Text, week)
		}
	}
}
