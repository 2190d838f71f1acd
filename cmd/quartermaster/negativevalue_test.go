package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A negative number after a flag a command does not take is that flag's value (no word of any
// command begins with a dash), left out with it: the example is not left with -3 as a word, which
// typed back would be refused as a flag.
func TestAnUnknownFlagsNegativeValueIsLeftOutWithIt(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	pol := "../../commands/testdata/kolkata.yaml"
	for _, c := range []struct {
		args []string
		eg   string
	}{
		{[]string{"version", "--gpus", "-1"}, "quartermaster version"},
		{[]string{"migrate", "up", "--window", "-3", "--db", db}, "quartermaster migrate up --db " + db},
		{[]string{"templates", "show", "pytorch-ddp", "--gpus", "-3"}, "quartermaster templates show pytorch-ddp"},
		{[]string{"policy", "check", pol, "--gpus", "-2.5"}, "quartermaster policy check " + pol},
		{[]string{"agent-token", "list", "--db", db, "--since", "-7"}, "quartermaster agent-token list --db " + db},
	} {
		code, _, stderr := runQM(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Contains(msg, "\n") || !strings.HasSuffix(msg, "e.g. "+c.eg) {
			t.Errorf("%v: exit %d, %q; want one sentence ending e.g. %s", c.args, code, msg, c.eg)
			continue
		}
		if code, _, stderr := runQM(strings.Fields(c.eg)[1:]...); code != 0 {
			t.Errorf("%v: the example %s: exit %d, %s", c.args, c.eg, code, stderr)
		}
	}
}
