package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A misspelled command is refused in one sentence naming the one meant, whose example is the
// whole command line as typed with only the command put right (not the command alone, which
// typed back is refused for want of its verb); that example works. A word near no command is
// one sentence too, without the usage after it.
func TestAMisspelledCommandKeepsTheRestOfTheLineInItsExample(t *testing.T) {
	clearEnv(t)
	pol := "../../commands/testdata/orbit.yaml"
	for _, c := range []struct {
		args []string
		eg   string
	}{
		{[]string{"polcy", "check", pol}, "quartermaster policy check " + pol},
		{[]string{"templats", "show", "pytorch-ddp", "--policy", pol}, "quartermaster templates show pytorch-ddp --policy " + pol},
		{[]string{"verison", "--short"}, "quartermaster version --short"},
		{[]string{"Policy", "check", pol}, "quartermaster policy check " + pol},
	} {
		code, stdout, stderr := runQM(c.args...)
		msg := strings.TrimSpace(stderr)
		want := `quartermaster: "` + c.args[0] + `" is not a quartermaster command; the nearest is ` + strings.Fields(c.eg)[1] + ", e.g. " + c.eg
		if code != 2 || stdout != "" || msg != want {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, msg, want)
			continue
		}
		if code, _, stderr := runQM(strings.Fields(c.eg)[1:]...); code != 0 {
			t.Errorf("%v: the example %s: exit %d, %s", c.args, c.eg, code, stderr)
		}
	}
	code, stdout, stderr := runQM("xyzzy", "now")
	msg := strings.TrimSpace(stderr)
	if code != 2 || stdout != "" || strings.Contains(msg, "\n") || !strings.Contains(msg, `"xyzzy" is not a quartermaster command; the commands are agent-token, console`) {
		t.Errorf("xyzzy now: exit %d, %q; want exit 2 and one sentence listing the commands", code, msg)
	}
}

// Flags typed before the command where the command word is a flag's value (--db report) are
// answered with the command (and its verb) put first, the flag given a value: an example that
// works, not the list of commands.
func TestFlagsBeforeTheCommandAreMovedAfterIt(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	t.Setenv("QM_DATA_DIR", dir)
	if code, _, stderr := runQM("migrate", "up"); code != 0 {
		t.Fatalf("migrate up: %d %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		eg   string
	}{
		{[]string{"--db", "report"}, "quartermaster report --db sqlite:" + filepath.Join(dir, "quartermaster.db")},
		{[]string{"--db", "migrate", "status"}, "quartermaster migrate status --db sqlite:"},
		{[]string{"--db", "agent-token", "list"}, "quartermaster agent-token list --db sqlite:"},
	} {
		code, stdout, stderr := runQM(c.args...)
		msg := strings.TrimSpace(stderr)
		want := `quartermaster: the command comes first, before its flags (` + c.args[0] + `), e.g. ` + c.eg
		if code != 2 || stdout != "" || !strings.HasPrefix(msg, want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q…", c.args, code, msg, want)
			continue
		}
		if !strings.HasSuffix(c.eg, ".db") {
			continue // a database elsewhere: not made here
		}
		if code, _, stderr := runQM(strings.Fields(c.eg)[1:]...); code != 0 {
			t.Errorf("%v: the example %s: exit %d, %s", c.args, c.eg, code, stderr)
		}
	}
}
