package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A flag the command does not take is left out of the refusal's example with the value typed
// after it: the value is no word of the command (a node's name, a template's), and left behind
// it would be read as one.
func TestAnUnknownFlagIsLeftOutWithItsValue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"agent-token", "create", "node-17", "--polcy", "x"},
			"e.g. quartermaster agent-token create node-17\n"},
		{[]string{"agent-token", "revoke", "--owner", "ops", "node-17", "--db", "sqlite:/srv/qm/qm.db"},
			"e.g. quartermaster agent-token revoke node-17 --db sqlite:/srv/qm/qm.db\n"},
		// Templates of the embedded policy: typed back, the example is checked as a whole.
		{[]string{"templates", "render", "jax", "--owner", "ops", "nnodes=2"},
			"e.g. quartermaster templates render jax nnodes=2\n"},
		{[]string{"templates", "show", "jax", "--owner", "ops"},
			"e.g. quartermaster templates show jax\n"},
		// After a true/false flag of another command, a word is a word, left out where the
		// command takes no more.
		{[]string{"agent-token", "create", "node-17", "--json", "x"},
			"e.g. quartermaster agent-token create node-17\n"},
		{[]string{"migrate", "up", "--json", "x"},
			"e.g. quartermaster migrate up\n"},
		{[]string{"templates", "render", "jax", "--json", "nnodes=2"},
			"e.g. quartermaster templates render jax nnodes=2\n"},
		{[]string{"templates", "list", "--json", "jax"},
			"e.g. quartermaster templates list jax\n"},
		// Where the word after it is the one word the command needs, it is that word.
		{[]string{"agent-token", "create", "--polcy", "node-17"},
			"e.g. quartermaster agent-token create node-17\n"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), c.args, strings.NewReader(""), &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr: %s", c.args, code, stderr.String())
		}
		if got := stderr.String(); !strings.HasSuffix(got, c.want) || strings.Count(got, "\n") != 1 {
			t.Errorf("%v:\n got %q\nwant it to end %q", c.args, got, c.want)
		}
	}
}
