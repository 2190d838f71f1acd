package main

import (
	"strings"
	"testing"
)

// A command whose verb comes first, given flags before it, is answered with the verb put in front
// of them: the verb typed, once, not the verb put in and the one typed left behind as a word.
func TestTheVerbTypedAfterFlagsIsMovedInFront(t *testing.T) {
	t.Parallel() // QM_POLICY and the shell's other settings are unset (TestMain)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"discord", "--print", "register", "--policy", "selkie.yaml"}, "e.g. quartermaster discord register --print --policy selkie.yaml"},
		{[]string{"predict", "--json", "eval", "--trace", "mine.swf"}, "e.g. quartermaster predict eval --json --trace mine.swf"},
		{[]string{"policy", "--policy", "selkie.yaml", "check"}, "e.g. quartermaster policy check --policy selkie.yaml"},
		{[]string{"templates", "--policy", "selkie.yaml", "render", "jax-tpu-free"}, "e.g. quartermaster templates render --policy selkie.yaml jax-tpu-free"},
		{[]string{"templates", "--policy", "selkie.yaml", "show", "jax-tpu-free"}, "e.g. quartermaster templates show --policy selkie.yaml jax-tpu-free"},
		// A flag it does not take, with its value, is left out too.
		// (A template of the embedded policy: typed back, the example is checked as a whole.)
		{[]string{"templates", "--owner", "ops", "render", "jax"}, "e.g. quartermaster templates render jax"},
		{[]string{"predict", "--owner", "ops", "eval", "--trace", "mine.swf"}, "e.g. quartermaster predict eval --trace mine.swf"},
		{[]string{"discord", "--owner", "ops", "register", "--print", "--policy", "selkie.yaml"}, "e.g. quartermaster discord register --print --policy selkie.yaml"},
	} {
		code, _, stderr := runQM(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Contains(msg, "\n") || !strings.HasSuffix(msg, c.want) {
			t.Errorf("%v: exit %d, %q; want one sentence ending %q", c.args, code, msg, c.want)
		}
	}
}
