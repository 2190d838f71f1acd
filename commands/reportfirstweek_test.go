package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// reportsOn is the bot on a policy file with /gpu report answered.
func reportsOn(t *testing.T, file string) (*harness, *showback.Service) {
	t.Helper()
	h := newHarnessOn(t, file)
	svc := &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock}
	AddReport(h.bot, svc)
	return h, svc
}

// In an install's first week no week is complete since the first lease: /gpu report without a
// week (help's own example), of anyone's use or of a team, shows this week so far, saying it is
// not yet complete, rather than refusing. A week typed stays as it is: last week, before the first
// lease, is still refused with an example that works. Once a week is complete, /gpu report shows
// it, as before.
func TestAReportWithoutAWeekInTheFirstWeekShowsThisWeekSoFar(t *testing.T) {
	for _, tc := range []struct{ policy, user, owner, team, class string }{
		{"testdata/fjord.yaml", "kari@fjord.example", "ingrid@fjord.example", "ml-infra2", "scratchpad"},
		{"testdata/harbor.yaml", "wiremu@harbor.example", "ines@harbor.example", "seismic", "bench"},
		{"testdata/tokyo.yaml", "haru@sakura.example", "kenji@sakura.example", "proteomics", "jupyter"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			h, svc := reportsOn(t, tc.policy)
			mustOK(t, h.say(tc.user, "/gpu request 1 "+tc.class+" for 1h"))
			h.advance(2 * time.Hour)
			this := svc.LastComplete().Next().String()
			for who, line := range map[string]string{tc.user: "/gpu report", tc.owner: "/gpu report " + tc.team} {
				r := h.say(who, line)
				if r.Error || !strings.Contains(r.Text, "not yet complete") || !strings.Contains(r.Text, this) || !strings.Contains(r.Text, "so far") {
					t.Errorf("%s: %s in the first week: %q; want this week (%s) so far, said to be not yet complete", who, line, r.Text, this)
				}
			}
			if r := h.say(tc.owner, "/gpu report "+tc.team); !strings.Contains(r.Text, "1.00 GPU-hours") {
				t.Errorf("/gpu report %s: %q; want the week's GPU-hour so far", tc.team, r.Text)
			}
			refusedWithAWorkingExample(t, h, tc.user, "/gpu report last week", "There is no history for")
			// A week later the week of the lease is complete: it is the one shown, as it was.
			h.advance(7 * 24 * time.Hour)
			r := h.say(tc.user, "/gpu report")
			if r.Error || strings.Contains(r.Text, "not yet complete") || !strings.Contains(r.Text, this) {
				t.Errorf("/gpu report a week later: %q; want the complete week %s", r.Text, this)
			}
		})
	}
}
