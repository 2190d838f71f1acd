package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/shellword"
)

// An empty word typed where it means something (templates list ” lists every template) is kept
// in the example as a shell word, ”, rather than dropped from the line or left as a trailing
// space; the example, typed back, works.
func TestAnEmptyWordIsKeptQuotedInTheExample(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"templates", "lst", ""},
		{"templats", "list", ""},
		{"templates", "lst", "", "--policy", filepath.Join("..", "..", "commands", "testdata", "tokyo.yaml")},
	} {
		code, _, stderr := runQM(args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.HasSuffix(msg, " list ''") && !strings.Contains(msg, " list '' ") {
			t.Errorf("%q: exit %d, %q; want an example that keeps the empty word as ''", args, code, msg)
			continue
		}
		if _, stderr, code := runCLI(exampleOf(msg)...); code != 0 {
			t.Errorf("%q: the example of %q is refused: %s", args, msg, stderr)
		}
	}
	if got := shellword.Join([]string{"quartermaster", "templates", "list", ""}); got != "quartermaster templates list ''" {
		t.Errorf("shellword.Join keeps an empty word as %q", got)
	}
}
