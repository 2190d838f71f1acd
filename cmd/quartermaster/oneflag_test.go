package main

import (
	"strings"
	"testing"
)

// A command that takes one flag, given a flag that is none of its own with a value, takes it for
// that flag only where it is plausibly a misspelling of it (--dbb or --database for --db); any
// other flag is left out with its value, and the example still works (policy check gets the file
// it needs).
func TestAnUnknownFlagIsTakenForTheOneFlagOnlyWhereItCouldBeIt(t *testing.T) {
	clearEnv(t)
	t.Setenv("QM_POLICY", "")
	for _, c := range []struct {
		args []string
		eg   string
	}{
		{[]string{"agent-token", "--polcy", "x"}, "e.g. quartermaster agent-token list"},
		{[]string{"agent-token", "list", "--zzzz", "x"}, "e.g. quartermaster agent-token list"},
		{[]string{"migrate", "up", "--policy", "p.yaml"}, "e.g. quartermaster migrate up"},
		{[]string{"agent-token", "list", "--dbb", "sqlite:x.db"}, "e.g. quartermaster agent-token list --db sqlite:x.db"},
		{[]string{"migrate", "up", "--database", "sqlite:x.db"}, "e.g. quartermaster migrate up --db sqlite:x.db"},
		{[]string{"policy", "--db", "x"}, "e.g. quartermaster policy check docs/quartermaster.example.yaml"},
		{[]string{"policy", "--file", "mine.yaml"}, "e.g. quartermaster policy check docs/quartermaster.example.yaml"},
		{[]string{"policy", "--polcy", "mine.yaml"}, "e.g. quartermaster policy check --policy mine.yaml"},
	} {
		code, _, stderr := runQM(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Contains(msg, "\n") || !strings.HasSuffix(msg, c.eg) {
			t.Errorf("%v: exit %d, %q; want exit 2 and one sentence ending %q", c.args, code, msg, c.eg)
		}
	}
}
