package main

import (
	"strings"
	"testing"
)

// A mistake in report's flags or arguments is one sentence on standard error with an example that
// works at the time the report is asked for (--now, when given): no flag listing to scroll past,
// and no example week that has not begun yet.
func TestReportFlagMistakesGiveOneSentenceAndAWorkingExample(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--now", "2026-10-07T00:00:00Z", "--bogus"},
			`quartermaster report: flag provided but not defined: -bogus; report takes --db, --format, --now, --out, --policy, --team and --week. Example: quartermaster report --week 2026-W40 --format text`},
		{[]string{"--now", "2026-10-07T00:00:00Z", "--week"},
			`quartermaster report: flag needs an argument: -week; report takes --db, --format, --now, --out, --policy, --team and --week. Example: quartermaster report --week 2026-W40 --format text`},
		{[]string{"--now", "2026-10-07T00:00:00Z", "--format", "csv", "2026-W40"},
			`quartermaster report: report takes only flags, but got "2026-W40". Example: quartermaster report --week 2026-W40 --format csv`},
		{[]string{"--now", "2026-10-07T00:00:00Z", "--format", "xlsx"},
			`quartermaster report: --format "xlsx" is not one of text, csv, json, png. Example: quartermaster report --week 2026-W40 --format csv`},
	} {
		_, stderr, code := runCLI(append([]string{"report"}, c.args...)...)
		if code != 2 || strings.TrimSpace(stderr) != c.want {
			t.Errorf("report %v: exit %d, %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
