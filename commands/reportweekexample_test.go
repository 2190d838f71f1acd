package commands

import (
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// Someone who asks for a team's showback they may not see, before the history has a complete
// week, is refused with an example that shows their own use of a week there is a report of.
func TestAnotherTeamsReportBeforeAWeekOfHistoryOffersAWeekThatWorks(t *testing.T) {
	for _, tc := range walkPolicies {
		t.Run(tc.team, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
			if r := h.say(tc.user, "/gpu request 1 "+tc.class+" for 1h"); r.Error {
				t.Fatal(r.Text)
			}
			refusedWithAWorkingExample(t, h, tc.user, "/gpu report "+tc.other, "see its showback")
		})
	}
}
