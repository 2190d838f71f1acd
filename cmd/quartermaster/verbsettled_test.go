package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The refusals of templates, policy check and agent-token put every mistake of the line right in
// their example, as report's and predict's do: a misspelled verb named with the one meant, and
// what that verb would refuse next (a missing node, a file there is none of, a backend misspelled)
// put right with it, so that typed back the example is accepted.
func TestTemplatesPolicyAndAgentTokenExamplesAreAcceptedWhenTypedBack(t *testing.T) {
	clearEnv(t)
	text, err := os.ReadFile(filepath.Join(testdataDir(t), "harbor.yaml"))
	dir := t.TempDir()
	t.Chdir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("harbor.yaml", text, 0o600); err != nil {
		t.Fatal(err)
	}
	// A database for each line that creates a token (typed back, its example creates one).
	db, db2 := "sqlite:"+filepath.Join(dir, "qm.db"), "sqlite:"+filepath.Join(dir, "qm2.db")
	for _, url := range []string{db, db2} {
		if code, _, stderr := runQM("migrate", "up", "--db", url); code != 0 {
			t.Fatalf("migrate up: %d %s", code, stderr)
		}
	}
	// Checking the example changes nothing: a refused line makes no data directory.
	if code, _, stderr := runQM("agent-token", "creat"); code != 2 {
		t.Errorf("agent-token creat: exit %d, %q; want exit 2", code, stderr)
	}
	if _, err := os.Stat("data"); err == nil {
		t.Errorf("agent-token creat, refused, made the data directory")
	}
	for _, args := range [][]string{
		{"agent-token", "creat", "--db", db},
		{"agent-token", "--db", db2, "crate"},
		{"policy", "chek", "harbour.yaml"},
		{"policy", "chek", "--policy", "harbr.yaml"},
		{"templates", "rendr", "cuda-smoke", "--backend", "slrum"},
		{"templates", "shwo"},
		{"templates", "--policy", "harbor.yaml", "rnder", "nosuch"},
	} {
		code, stdout, stderr := runQM(args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || stdout != "" || strings.Contains(msg, "\n") {
			t.Errorf("%q: exit %d, %q; want exit 2 and one sentence", args, code, msg)
			continue
		}
		eg := exampleOf(msg)
		if eg == nil {
			t.Errorf("%q: no example in %q", args, msg)
			continue
		}
		if code, _, stderr := runQM(eg...); code != 0 {
			t.Errorf("%q: %s\n  its example %q is refused: %s", args, msg, eg, stderr)
		}
	}
}

// testdataDir is commands/testdata, as an absolute path (the test may change directory).
func testdataDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs("../../commands/testdata")
	if err != nil {
		t.Fatal(err)
	}
	return d
}
