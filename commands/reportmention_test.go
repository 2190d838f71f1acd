package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A user group's or a person's mention where /gpu report's team goes is refused saying a user
// group is not a team, wherever the mention stands: first (@leads), after a week (2026-W49
// @leads, last week @leads) or before one. The example is the report asked for without it, the
// week as typed, and works.
func TestAMentionInAReportIsNoTeamWhereverItStands(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	for _, tc := range []struct{ ask, example string }{
		{"report @leads", "report"},
		{"report 2026-W48 @leads", "report 2026-W48"},
		{"report last week @leads", "report last week"},
		{"report @leads 2026-W48", "report 2026-W48"},
	} {
		got := h.say("sven@petrel.example.se", tc.ask)
		if !got.Error || !strings.Contains(got.Text, `"@leads" names a user group or a person, not a team; a team is named without the @, as the policy writes it: akeri, bild-2 or ljud.`) || exampleOf(t, got.Text) != tc.example {
			t.Errorf("/gpu %s answered %q; want a user group named as no team and the example /gpu %s", tc.ask, got.Text, tc.example)
			continue
		}
		if again := h.say("sven@petrel.example.se", tc.example); again.Error {
			t.Errorf("/gpu %s: the example answered %q", tc.ask, again.Text)
		}
	}
	// A handle close to a team's name names the team meant, kept in the example where the asker
	// may see its report.
	got := h.say("astrid@petrel.example.se", "report 2026-W48 @ljud-team")
	if !strings.Contains(got.Text, `"@ljud-team" names a user group or a person, not a team; did you mean team ljud?`) || exampleOf(t, got.Text) != "report 2026-W48 ljud" {
		t.Errorf("/gpu report 2026-W48 @ljud-team answered %q", got.Text)
	}
}
