package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// TestATeamWrittenAsAMentionIsNamedWithoutTheAt: @equipe-vision (a chat's user group, or a team
// written as a person is mentioned; with a full-width ＠ or its accents too) was refused as no
// team name, saying nothing of the team meant. Each refusal names the team meant, with the
// command typed with it as the example, which works; /gpu report as well.
func TestATeamWrittenAsAMentionIsNamedWithoutTheAt(t *testing.T) {
	h := newHarnessOn(t, baobabPolicy)
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	for _, x := range []struct{ who, ask, says, example string }{
		{"awa@baobab.example", "/gpu quota @equipe-vision", `"@equipe-vision" is not a team name; did you mean equipe-vision?`, "/gpu quota equipe-vision"},
		{"awa@baobab.example", "/gpu quota ＠Équipe-Vision", `"＠Équipe-Vision" is not a team name; did you mean equipe-vision?`, "/gpu quota equipe-vision"},
		{"awa@baobab.example", "/gpu request 1 cuivre for 1h team @equipe-vision", `"@equipe-vision" is not a team name; did you mean equipe-vision?`, "/gpu request 1 cuivre for 1h team equipe-vision"},
		{"aminata@baobab.example", "/gpu report this week @equipe-vision", `There is no team "@equipe-vision"; did you mean equipe-vision?`, "/gpu report 2026-W49 equipe-vision"},
	} {
		r := h.say(x.who, x.ask)
		msg, ex, ok := strings.Cut(r.Text, " Example: ")
		if !r.Error || !ok || msg != x.says || ex != x.example {
			t.Errorf("%s: %q; want %q with the example %q", x.ask, r.Text, x.says, x.example)
			continue
		}
		if r := h.say(x.who, ex); r.Error {
			t.Errorf("the example %s is refused: %s", ex, r.Text)
		}
		h.advance(2 * time.Hour)
	}
	// A mention of no team is still no team: a user group, not a team, with how teams are named.
	if r := h.say("awa@baobab.example", "/gpu quota @eclair"); !r.Error || !strings.Contains(r.Text, `"@eclair" names a user group or a person, not a team;`) || strings.Contains(r.Text, "did you mean") {
		t.Errorf("/gpu quota @eclair: %q", r.Text)
	}
}
