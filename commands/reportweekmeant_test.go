package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A week written without its year or its W ("W49", "week 49", "2026/49") is refused with the week
// meant as the example, of this year or, where this year has not reached it, of the last; before, the example offered another week, so
// typing it back showed a report of a week that was not asked for.
func TestAReportOfAWeekWrittenAnotherWayOffersTheWeekMeant(t *testing.T) {
	h := kelpOn(t)
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	const who = "mara@kelp.example"
	mustOK(t, h.say(who, "/gpu request 1 tidal for 1h"))
	now := h.say(who, "/gpu report this week")
	mustOK(t, now)
	// The week asked in, as the report names it (YEAR-Wnn).
	var week string
	for _, w := range strings.Fields(now.PlainText()) {
		if len(w) >= 8 && w[4] == '-' && w[5] == 'W' {
			week = strings.TrimRight(w, ",.:;)")
			break
		}
	}
	if week == "" {
		t.Fatalf("no week in %q", now.PlainText())
	}
	// Three weeks on, the week asked in is one of the history's, not the one an example offers.
	h.advance(21 * 24 * time.Hour)
	mustOK(t, h.say(who, "/gpu report "+week))
	year, num := week[:4], strings.TrimLeft(week[6:], "0")
	for _, typed := range []string{"W" + num, "w" + num, "week" + num, year + "/" + num, year + "-" + num} {
		refusedAs(t, h, who, "report "+typed, "write a week as YEAR-Wnn: "+week+".", "report "+week)
	}
}
