package commands

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A team named "week" is that team after any week: /gpu report 2026-W48 week (and Discord's
// options, which write the same) is team week's report for that week, as /gpu report last week
// week is, not a week written "2026-W48 week".
func TestAReportForATeamNamedWeek(t *testing.T) {
	src := "organization: Calendar Co\ncurrency: USD\ntimezone: UTC\nclasses:\n  - {name: c1, sku: H100, price_per_gpu_hour: 1, max_gpus: 8, max_duration: 8h}\n" +
		"default_quota: {gpus: {c1: 1}, gpu_hours_per_week: 10}\nteams:\n" +
		"  - {name: week, idp_groups: [g1], budget_owners: [o@x.example]}\n  - {name: other, idp_groups: [g2], budget_owners: [p@x.example]}\n" +
		"approvals: {timeout: 24h, fallback_approvers: [o@x.example]}\nbackend: sim\ndirectory:\n  - {user: u@x.example, groups: [g1]}\n  - {user: o@x.example, groups: [g1]}\n" +
		"sim:\n  nodes:\n    - {name: n, count: 1, class: c1, gpus: 8}\n"
	file := filepath.Join(t.TempDir(), "week.yaml")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, file)
	svc := &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock}
	AddReport(h.bot, svc)
	last := svc.LastComplete().String()
	want := h.say("o@x.example", "/gpu report last week week")
	if want.Error {
		t.Fatalf("/gpu report last week week: %s", want.Text)
	}
	s, _ := Lookup("report")
	for _, line := range []string{"/gpu report " + last + " week", s.Text(map[string]string{"week": last, "team": "week"})} {
		if got := h.say("o@x.example", line); got.Error || got.Text != want.Text {
			t.Errorf("%s: %q; want team week's report for %s, %q", line, got.Text, last, want.Text)
		}
	}
}
