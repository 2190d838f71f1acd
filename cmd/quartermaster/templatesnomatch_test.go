package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A search that finds no template is refused as /gpu templates refuses it: one sentence and an
// example, with the flags typed kept, that lists templates when typed back: the template the word
// is a near miss of, or else a word that finds some.
func TestATemplateSearchFindingNoneGivesAnExampleThatFindsSome(t *testing.T) {
	t.Parallel()
	fjord := filepath.Join("..", "..", "commands", "testdata", "fjord.yaml")
	for _, c := range []struct {
		args []string
		want string // in the example, where one word is certain
	}{
		{[]string{"templates", "list", "zzzz"}, ""},
		{[]string{"templates", "list", "vs", "code", "zzz"}, ""},
		{[]string{"templates", "list", "pytorh-ddp"}, "pytorch-ddp"},
		{[]string{"templates", "list", "--policy", fjord, "zzzz"}, "--policy " + fjord},
		{[]string{"templates", "list", "rapids-notebok", "--policy=" + fjord}, "rapids-notebook"},
	} {
		_, stderr, code := runCLI(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "no template matches") || !strings.Contains(msg, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line saying no template matches, with %q", c.args, code, msg, c.want)
			continue
		}
		ex := exampleOf(msg)
		if len(ex) < 3 || ex[0] != "templates" || ex[1] != "list" {
			t.Errorf("%v: %q gives no quartermaster templates list example", c.args, msg)
			continue
		}
		out, back, code := runCLI(ex...)
		if code != 0 || !strings.HasPrefix(out, "NAME") || strings.Count(out, "\n") < 2 {
			t.Errorf("%v: the example %v, typed back, exits %d: %q %q", c.args, ex, code, out, back)
		}
	}
}
