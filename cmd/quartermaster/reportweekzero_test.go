package main

import (
	"regexp"
	"strings"
	"testing"
)

// report with --week that is no week (week 0, a negative one) and no database is refused for the
// database with an example that names a week, not the --week typed, which would be refused next.
func TestReportWithoutDatabasePutsABadWeekRight(t *testing.T) {
	t.Setenv("QM_DATA_DIR", t.TempDir())
	t.Setenv("QM_DATABASE_URL", "")
	t.Setenv("QM_POLICY", "")
	week := regexp.MustCompile(`--week[ =](\d{4}-W\d\d)\b`)
	for _, args := range [][]string{
		{"--week", "2026-W00"},
		{"--team", "vision", "--week", "-1"},
		{"--week=0", "--format", "csv"},
		{"--db", "sqlite:" + t.TempDir() + "/none.db", "--week", "2026-W-3"},
	} {
		code, _, stderr := runQM(append([]string{"report"}, args...)...)
		msg := strings.TrimSpace(stderr)
		_, eg, ok := strings.Cut(msg, "e.g. quartermaster report ")
		if code != 2 || !ok || strings.Contains(msg, "\n") {
			t.Errorf("report %v: exit %d, %q; want one sentence with an example", args, code, msg)
			continue
		}
		m := week.FindStringSubmatch(eg)
		if m == nil || strings.HasSuffix(m[1], "W00") || strings.Count(eg, "--week") != 1 {
			t.Errorf("report %v: the example %q gives no week that is one", args, eg)
		}
	}
}

// A week named (last week) is no mistake: the example keeps it as typed.
func TestReportWithoutDatabaseKeepsANamedWeek(t *testing.T) {
	t.Setenv("QM_DATA_DIR", t.TempDir())
	t.Setenv("QM_DATABASE_URL", "")
	t.Setenv("QM_POLICY", "")
	_, _, stderr := runQM("report", "--week", "last week")
	if !strings.Contains(stderr, "--week 'last week'") {
		t.Errorf("report --week 'last week': %q; want the example to keep --week 'last week'", stderr)
	}
}
