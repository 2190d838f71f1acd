package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// report refused for its week (no history, not a week, not begun) while its --team names no team
// of the policy nor of the database puts both right in one example, and the sentence says both:
// the example runs. A team that is one keeps its name.
func TestReportPutsTheWeekAndTheTeamRightInOneExample(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("QM_DATA_DIR", dir)
	t.Setenv("QM_DATABASE_URL", "")
	t.Setenv("QM_POLICY", "")
	// A policy of its own: teams robotics and language.
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "quartermaster.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(dir, "own.yaml")
	if err := os.WriteFile(own, []byte(strings.ReplaceAll(string(b), "vision", "robotics")), 0o600); err != nil {
		t.Fatal(err)
	}
	runConsoleAt(t, dir, "2026-11-24T15:00:00Z", "alice@acme.example: /gpu request 1 interactive 2h\n:advance 3h\n", "--policy", own)
	for _, c := range []struct {
		args []string
		says []string
		eg   string
	}{
		{[]string{"--week", "2026-W43", "--team", "ghost"}, []string{"no history for 2026-W43", `no team "ghost"`},
			"e.g. quartermaster report --now 2026-12-01T15:00:00Z --policy " + own + " --week 2026-W48 --team language"},
		{[]string{"--week", "2026-W43", "--team", "robotcs"}, []string{"no history for 2026-W43", `no team "robotcs"`},
			"e.g. quartermaster report --now 2026-12-01T15:00:00Z --policy " + own + " --week 2026-W48 --team robotics"},
		{[]string{"--team", "ghost", "--week", "2026-W99"}, []string{`"2026-W99" is not a week`, `no team "ghost"`},
			"e.g. quartermaster report --now 2026-12-01T15:00:00Z --policy " + own + " --team language --week 2026-W48"},
		{[]string{"--week", "2026-W50", "--team", "ghost"}, []string{"2026-W50 has not begun yet", `no team "ghost"`},
			"e.g. quartermaster report --now 2026-12-01T15:00:00Z --policy " + own + " --week 2026-W48 --team language"},
		{[]string{"--week", "2026-W43", "--team", "robotics"}, []string{"no history for 2026-W43"},
			"e.g. quartermaster report --now 2026-12-01T15:00:00Z --policy " + own + " --week 2026-W48 --team robotics"},
	} {
		args := append([]string{"report", "--now", "2026-12-01T15:00:00Z", "--policy", own}, c.args...)
		_, stderr, code := runCLI(args...)
		msg := strings.TrimSpace(stderr)
		ok := code == 2 && !strings.Contains(msg, "\n") && strings.HasSuffix(msg, c.eg)
		for _, s := range c.says {
			ok = ok && strings.Contains(msg, s)
		}
		if !ok {
			t.Errorf("report %v: exit %d, %q; want one sentence saying %q and ending %q", c.args, code, msg, c.says, c.eg)
			continue
		}
		if _, stderr, code := runCLI(strings.Fields(c.eg)[2:]...); code != 0 {
			t.Errorf("the example %q: exit %d, %s", c.eg, code, stderr)
		}
	}
}
