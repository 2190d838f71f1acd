package main

import (
	"strings"
	"testing"
)

// Every command-line refusal is one sentence ending with "e.g. quartermaster COMMAND …": the
// whole command as typed, put right, never "Example:" or "example:" and never a lone flag.
func TestCommandLineRefusalsGiveTheWholeCommandPutRight(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // what follows "e.g. "
	}{
		{[]string{"serve", "--demo", "now"}, "quartermaster serve --demo"},
		{[]string{"version", "--short", "please"}, "quartermaster version --short"},
		{[]string{"report", "--format", "csv", "2026-W48"}, "quartermaster report --format csv --week 2026-W48"},
		{[]string{"report", "--format", "xls", "--team", "speech"}, "quartermaster report --format csv --team speech"},
		{[]string{"report", "--now", "yesterday", "--format", "json"}, "quartermaster report --now 2026-11-30T15:00:00Z --format json"},
		{[]string{"report", "--now=noon"}, "quartermaster report --now=2026-11-30T15:00:00Z"},
		{[]string{"report", "--db", "x", "--format", "csv"}, "quartermaster report --db sqlite:x --format csv"},
		{[]string{"migrate", "status", "--db=x"}, "quartermaster migrate status --db=sqlite:x"},
	} {
		clearEnv(t)
		code, _, stderr := runQM(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 {
			t.Errorf("%q: exit %d, want 2 and one line; got %q", c.args, code, msg)
			continue
		}
		if strings.Contains(msg, "Example:") || strings.Contains(msg, "example:") {
			t.Errorf("%q: %q says Example:, not e.g.", c.args, msg)
		}
		if !strings.HasSuffix(msg, "e.g. "+c.want) {
			t.Errorf("%q: %q does not end with %q", c.args, msg, "e.g. "+c.want)
		}
	}
}
