package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A --clock that is no RFC 3339 instant (or given no value) is refused with an example that,
// typed back, starts the console: on a database whose history runs past the example's usual
// instant, the example is where that history stops, since the simulated clock never goes back
// (it offered 2026-11-30T09:00:00Z, refused again as before the last change).
func TestConsoleClockRefusalOffersAnInstantTheDatabaseTakes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := filepath.Join("..", "..", "commands", "testdata", "other.yaml")
	runConsoleAt(t, dir, "2027-05-12T08:00:00Z", "rita@borealis.example: /gpu request 2 dev for 6h\n:advance 3h\n", "--policy", pol)
	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	for _, args := range [][]string{
		{"console", "--db", db, "--policy", pol, "--clock", "2026-01-01"},
		{"console", "--db", db, "--policy", pol, "--clock"},
	} {
		_, stderr, code := runCLI(args...)
		ex := exampleOf(stderr)
		if code != 2 || len(ex) == 0 {
			t.Errorf("%q: exit %d, %q; want a refusal with an example", args, code, stderr)
			continue
		}
		if _, stderr2, code := runCLI(ex...); code != 0 {
			t.Errorf("%q: %s\nits example %q, typed back, is refused: %s", args, strings.TrimSpace(stderr), ex, stderr2)
		}
	}
}
