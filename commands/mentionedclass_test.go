package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A class mentioned where a team goes (@mi300x, a Slack handle that is a class's name) is refused
// saying it is a class, not a team, not as a user group or a person; the example names it where a
// class goes (a request's class, in place of the one typed) or, where the command takes no class,
// is the command without it. Each example works.
func TestAClassMentionedWhereATeamGoesIsSaidToBeAClass(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	for _, tc := range []struct{ ask, says, example string }{
		{"report 2026-W48 @mi300x", `"@mi300x" is a class, not a team; /gpu report shows the use of every class, mi300x among them.`, "report 2026-W48"},
		{"request 1 a100-80g for 1h team @mi300x", `"@mi300x" is a class, not a team; a class is named without the @, after the number of GPUs.`, "request 1 mi300x for 1h"},
		{"estimate 1 a100-80g 2h team=@MI300X", `"@MI300X" is a class, not a team;`, "estimate 1 mi300x 2h"},
		{"quota @a100-80g", `"@a100-80g" is a class, not a team; /gpu quota shows your team's quota of every class, a100-80g among them.`, "quota"},
	} {
		got := h.say("sven@petrel.example.se", tc.ask)
		if !got.Error || !strings.Contains(got.Text, tc.says) || strings.Contains(got.Text, "user group") || exampleOf(t, got.Text) != tc.example {
			t.Errorf("/gpu %s answered %q; want %q and the example /gpu %s", tc.ask, got.Text, tc.says, tc.example)
			continue
		}
		if again := h.say("sven@petrel.example.se", tc.example); again.Error {
			t.Errorf("/gpu %s: the example answered %q", tc.ask, again.Text)
		}
	}
}
