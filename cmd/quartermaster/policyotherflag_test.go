package main

import (
	"strings"
	"testing"
)

// policy check given a flag it does not take leaves the flag out of its example with the value
// typed after it: --db x is no policy file. A word after a flag no command has, or after a
// true/false flag, is the file where the command has no other.
func TestPolicyCheckLeavesAnotherCommandsFlagOutWithItsValue(t *testing.T) {
	t.Setenv("QM_POLICY", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"policy", "check", "--db", "x"}, "e.g. quartermaster policy check docs/quartermaster.example.yaml"},
		{[]string{"policy", "check", "--db", "sqlite:qm.db", "selkie.yaml"}, "e.g. quartermaster policy check selkie.yaml"},
		{[]string{"policy", "check", "selkie.yaml", "--http", ":9090"}, "e.g. quartermaster policy check selkie.yaml"},
		{[]string{"policy", "check", "--team", "vision", "--policy", "selkie.yaml"}, "e.g. quartermaster policy check --policy selkie.yaml"},
		{[]string{"policy", "check", "--json", "selkie.yaml"}, "e.g. quartermaster policy check selkie.yaml"},
		{[]string{"policy", "check", "--stritc", "selkie.yaml"}, "e.g. quartermaster policy check selkie.yaml"},
	} {
		code, _, stderr := runQM(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Contains(msg, "\n") || !strings.HasSuffix(msg, c.want) {
			t.Errorf("%v: exit %d, %q; want one sentence ending %q", c.args, code, msg, c.want)
		}
	}
}
