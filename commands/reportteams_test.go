package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// /gpu report naming a team that does not exist, in an organisation of 400 teams, is refused to
// a platform admin (who sees every team's report) in one short sentence that names a few of the
// teams (the closest first) and how many more there are, with an example that works; not in a
// sentence of 16 KB that lists every team.
func TestAReportForATeamThatDoesNotExistNamesAFewTeams(t *testing.T) {
	var b strings.Builder
	b.WriteString("organization: Many Inc\ncurrency: USD\ntimezone: UTC\nclasses:\n  - {name: c1, sku: H100, price_per_gpu_hour: 1, max_gpus: 8, max_duration: 8h}\n")
	b.WriteString("default_quota: {gpus: {c1: 1}, gpu_hours_per_week: 10}\nteams:\n")
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&b, "  - {name: team-with-a-rather-long-name-number-%03d, idp_groups: [g%03d], budget_owners: [o@x.example]}\n", i, i)
	}
	b.WriteString("approvals: {timeout: 24h, fallback_approvers: [o@x.example]}\nbackend: sim\ndirectory:\n  - {user: u@x.example, groups: [g001]}\n  - {user: o@x.example, groups: [g002]}\n")
	b.WriteString("sim:\n  nodes:\n    - {name: n, count: 1, class: c1, gpus: 8}\n")
	file := filepath.Join(t.TempDir(), "many.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, file)
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	for _, line := range []string{"/gpu report nosuchteam", "/gpu report last week nosuchteam", "/gpu report 2026-W47 nosuchteam"} {
		refusedWithAWorkingExample(t, h, "o@x.example", line, "more")
	}
	if r := h.say("u@x.example", "/gpu report last week team-with-a-rather-long-name-number-0011"); !strings.Contains(r.Text, "team-with-a-rather-long-name-number-001,") &&
		!strings.Contains(r.Text, "team-with-a-rather-long-name-number-001 ") && !strings.Contains(r.Text, "did you mean team-with-a-rather-long-name-number-001?") {
		t.Errorf("a near miss is not offered the closest team first: %.300q", r.Text)
	}
}

// A class that does not exist, in a catalog of 120 classes, is refused the same way wherever it
// is typed (request, estimate, submit class=, quota request): one short sentence naming three
// classes, the closest first, and how many more there are, with an example that works.
func TestAnUnknownClassNamesAFewClasses(t *testing.T) {
	var b strings.Builder
	b.WriteString("organization: Many Classes Inc\ncurrency: USD\ntimezone: UTC\nclasses:\n")
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&b, "  - {name: class-with-a-long-name-%03d, sku: H100, price_per_gpu_hour: 1, max_gpus: 8, max_duration: 8h}\n", i)
	}
	b.WriteString("default_quota: {gpus: {class-with-a-long-name-001: 8}, gpu_hours_per_week: 1000}\nteams:\n")
	b.WriteString("  - {name: t001, idp_groups: [g001], budget_owners: [o@x.example]}\n")
	b.WriteString("approvals: {timeout: 24h, fallback_approvers: [o@x.example]}\nbackend: sim\ndirectory:\n  - {user: u@x.example, groups: [g001]}\n")
	b.WriteString("sim:\n  nodes:\n    - {name: n, count: 1, class: class-with-a-long-name-001, gpus: 8}\n")
	file := filepath.Join(t.TempDir(), "classes.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	h := templatesOn(t, file)
	for _, line := range []string{"/gpu request 1 nosuch 1h", "/gpu estimate 1 nosuch 1h", "/gpu submit cuda-smoke class=nosuch", "/gpu quota request +1 nosuch because x"} {
		refusedWithAWorkingExample(t, h, "u@x.example", line, "and 117 more")
	}
	if r := h.say("u@x.example", "/gpu estimate 1 class-with-a-long-name-0500 1h"); !strings.Contains(r.Text, "the catalog has class-with-a-long-name-050,") {
		t.Errorf("a near miss is not offered the closest class first: %.300q", r.Text)
	}
}
