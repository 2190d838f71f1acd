package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A week written with digits other than 0-9 (2026-W٤٩, 2026-W٣) is refused in the words the
// grammar uses for such digits elsewhere, not as "not an ISO week": the week meant, with 0-9, is
// the example where it has a report, else a week that has one.
func TestAWeekInOtherDigitsIsSaidToBeSo(t *testing.T) {
	for _, tc := range walkPolicies {
		t.Run(tc.team, func(t *testing.T) {
			h := newHarnessOn(t, tc.policy)
			AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
			mustOK(t, h.say(tc.user, "/gpu request 1 "+tc.class+" for 1h"))
			h.advance(8 * 24 * time.Hour) // 2026-W49 is complete
			const says = "is written with digits other than 0-9; write the week with the digits 0-9"
			for _, ask := range []string{"/gpu report 2026-W٤٩", "/gpu report 2026-W٣", "/gpu report ٢٠٢٦-W49 " + tc.team} {
				refusedWithAWorkingExample(t, h, tc.user, ask, says)
				if r := h.say(tc.user, ask); strings.Contains(r.Text, "ISO week") {
					t.Errorf("%s answered %q", ask, r.Text)
				}
			}
			if ex := exampleIn(t, h.say(tc.user, "/gpu report 2026-W٤٩")); ex != "/gpu report 2026-W49" {
				t.Errorf("/gpu report 2026-W٤٩: example %q; want the week meant, /gpu report 2026-W49", ex)
			}
		})
	}
}
