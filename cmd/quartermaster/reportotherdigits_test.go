package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// quartermaster report --week written with digits of another script (٢٠٢٦-W٤٨, Arabic-Indic;
// २०२६-W४८, Devanagari) is refused as /gpu report refuses it, for its digits, naming the week meant
// with the digits 0-9 as the example, which, typed back, writes the report; one whose digits mix
// 0-9 with another script's (2026-W٤٩) is refused for its digits as well, with a week that has a
// report.
func TestReportWeekWithOtherDigitsIsRefusedForItsDigits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := filepath.Join("..", "..", "commands", "testdata", "plover.yaml")
	runConsoleAt(t, dir, "2026-11-24T15:00:00Z", "rita@plover.example: /gpu request 1 wren for 2h\n:advance 3h\n", "--policy", pol)
	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	base := []string{"report", "--db", db, "--policy", pol, "--now", "2026-12-09T15:00:00Z", "--format", "csv"}
	for _, c := range []struct{ typed, meant, says string }{
		{"٢٠٢٦-W٤٨", "2026-W48", ": 2026-W48"},
		{"२०२६-W४८", "2026-W48", ": 2026-W48"},
		{"٢٠٢٦-W٤٩", "2026-W49", ": 2026-W49"},
		{"2026-W٤٩", "2026-W49", ", like 2026-W49"}, // the example week, the last complete one
	} {
		_, stderr, code := runCLI(append(base, "--week", c.typed)...)
		msg := strings.TrimSpace(stderr)
		want := `"` + c.typed + `" is written with digits other than 0-9; write the week with the digits 0-9` + c.says + "; e.g. "
		if code != 2 || !strings.Contains(msg, want) {
			t.Errorf("--week %s: exit %d, %q; want exit 2 and %q", c.typed, code, msg, want)
			continue
		}
		_, example, ok := strings.Cut(msg, "; e.g. ")
		if !ok || !strings.Contains(example, "--week "+c.meant) {
			t.Errorf("--week %s: no example with --week %s: %q", c.typed, c.meant, msg)
			continue
		}
		args := strings.Fields(strings.TrimPrefix(example, "quartermaster "))
		if out, stderr, code := runCLI(args...); code != 0 || !strings.HasPrefix(out, "week,team,class") {
			t.Errorf("--week %s: the example %q: exit %d, %s", c.typed, example, code, stderr)
		}
	}
}
