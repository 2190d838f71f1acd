package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Flags typed before the command, where the words before it are all flags of that command (and
// their values), are the command's: the line runs as if the command came first.
func TestFlagsBeforeAnUnambiguousCommandAreAccepted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "qm.db")
	if code, _, stderr := runQM("migrate", "up", "--db", db); code != 0 {
		t.Fatalf("migrate up: %d %s", code, stderr)
	}
	pol := "../../commands/testdata/orbit.yaml"
	for _, args := range [][]string{
		{"--db", db, "report", "--format", "csv"},
		{"--db=" + db, "--format", "json", "report"},
		{"--policy", pol, "policy", "check"},
		{"--policy", pol, "templates", "list"},
		{"--db", db, "migrate", "status"},
		{"--short", "version"},
	} {
		code, stdout, stderr := runQM(args...)
		if code != 0 || stdout == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want it run", args, code, stdout, stderr)
		}
	}
	_, want, _ := runQM("version", "--short")
	if code, got, stderr := runQM("--short", "version"); code != 0 || got != want {
		t.Errorf("--short version: exit %d, %q %q; want %q", code, got, stderr, want)
	}
}

// --version is version: the flags after it are version's, as the agent takes them.
func TestVersionFlagKeepsTheRestOfTheLine(t *testing.T) {
	_, want, _ := runQM("version", "--short")
	if code, got, stderr := runQM("--version", "--short"); code != 0 || got != want || strings.Count(got, "\n") != 1 {
		t.Errorf("--version --short: exit %d, %q %q; want %q", code, got, stderr, want)
	}
	if code, _, stderr := runQM("--version", "--shrt"); code != 2 || !strings.Contains(stderr, "e.g. quartermaster version --short") {
		t.Errorf("--version --shrt: exit %d, %q; want the nearest flag, --short", code, stderr)
	}
}

// A refusal puts every mistake of the line right in its example, not the first alone: typed back,
// the example is accepted. Tried on the default policy and on another's. Each line runs as the
// built binary with QM_DATA_DIR in its environment (runBinary), so that the test runs in parallel
// with others and its commands without the race detector.
func TestARefusalsExampleIsAcceptedWhenTypedBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := append(slices.Clone(shellSettings), "QM_DATA_DIR="+dir) // the shell's settings unset, but the data directory
	if code, _, stderr := runBinary(t, ".", env, "migrate", "up", "--db", "sqlite:"+filepath.Join(dir, "quartermaster.db")); code != 0 {
		t.Fatalf("migrate up: %d %s", code, stderr)
	}
	pol := "../../commands/testdata/kolkata.yaml"
	for _, args := range [][]string{
		{"report", "--wek", "bogus"},
		{"report", "--wek=bogus"},
		{"report", "--format", "bogus", "--team", ""},
		{"report", "--team=", "--format=bogus"},
		{"reprot", "--week", ""},
		{"reprot", "--format", "bogus"},
		{"reprot", "--wek", "2026-W40"},
		{"report", "--fromat", "bogus"},
		{"report", "--week", "bogus", "--format", "xml"},
		{"report", "--week", "", "--format", "xml"},
		{"report", "--format", "xml", "--format", ""},
		{"report", "--policy", pol, "--format", "bogus", "--team", ""},
		{"report", "--policy", pol, "--wek", "bogus"},
		{"--format", "bogus", "report"},
		{"--wek", "bogus", "report"},
		{"report", "--now", "yesterday", "--format", "bogus"},
		{"report", "2026-W40", "--format", "bogus"},
		{"version", "--short", "now"},
		{"report", "--team", "nosuch", "--format", "bogus"},
		{"report", "--policy", pol, "--team", "nosuch", "--wek", "bogus"},
		{"report", "--now", "--format", "bogus"},
		{"report", "--policy", pol, "--policy", "", "--format", "csv"},
		{"report", "--policy=", "--format", "csv", "--policy", pol},
		{"report", "--week", "--team", ""},
		{"--policy", pol, "templates", "lst"},
		{"templates", "--policy", pol, "lst"},
		// A flag pasted from a document with a typographic dash.
		{"report", "—week", "2026-W40"},
		{"report", "–-format", "csv", "—team", ""},
		{"—format=json", "report", "--wek", "2026-W40"},
		{"—version", "—short"},
		{"--version", "--shrt"},
	} {
		code, stdout, stderr := runBinary(t, ".", env, args...)
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
		if code, _, stderr := runBinary(t, ".", env, eg...); code != 0 {
			t.Errorf("%q: %s\n  its example %q is refused: %s", args, msg, eg, stderr)
		}
	}
}

// A verb misspelled on a line with another mistake (an empty flag) is put right with it, not left
// behind as a word after the verb the example puts in.
func TestAMisspelledVerbIsPutRightWithTheOtherMistake(t *testing.T) {
	clearEnv(t)
	t.Chdir(t.TempDir())
	if err := os.Mkdir("data", 0o700); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runQM("migrate", "up", "--db", "sqlite:data/quartermaster.db"); code != 0 {
		t.Fatalf("migrate up: %d %s", code, stderr)
	}
	for _, args := range [][]string{
		{"migrate", "stauts", "--db", ""},
		{"agent-token", "lst", "--db="},
		{"--db", "", "migrate", "stauts"},
	} {
		code, _, stderr := runQM(args...)
		msg := strings.TrimSpace(stderr)
		eg := exampleOf(msg)
		if code != 2 || eg == nil || strings.Contains(msg, "\n") {
			t.Errorf("%q: exit %d, %q; want exit 2 and one sentence with an example", args, code, msg)
			continue
		}
		if code, _, stderr := runQM(eg...); code != 0 {
			t.Errorf("%q: %s\n  its example %q is refused: %s", args, msg, eg, stderr)
		}
	}
}
