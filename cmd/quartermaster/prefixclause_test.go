package main

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// A refusal reads as one sentence after its "quartermaster COMMAND: " prefix: a message the
// service writes as a sentence of its own ("There is no team …") goes on in lower case there,
// on any policy, and its example still works.
func TestARefusalAfterItsPrefixReadsAsOneSentence(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, policy, script string }{
		{"example", "", "alice@acme.example: /gpu request 1 interactive 2h\n:advance 3h\n"},
		{"borealis", filepath.Join("..", "..", "commands", "testdata", "other.yaml"), "rita@borealis.example: /gpu request 2 dev for 6h\n:advance 3h\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var pol []string
			if c.policy != "" {
				pol = []string{"--policy", c.policy}
			}
			runConsoleAt(t, dir, "2026-11-24T09:00:00Z", c.script, pol...)
			base := append([]string{"report", "--db", "sqlite:" + filepath.Join(dir, "quartermaster.db"), "--now", "2026-12-01T12:00:00Z"}, pol...)
			for _, extra := range [][]string{
				{"--team", "nonesuch"},
				{"--week", "2026-W40"},
				{"--week", "2026-W40", "--team", "nonesuch"},
			} {
				_, stderr, code := runCLI(append(append([]string{}, base...), extra...)...)
				msg, ok := strings.CutPrefix(strings.TrimSpace(stderr), "quartermaster report: ")
				if code != 2 || !ok {
					t.Errorf("%q: exit %d, %q; want a refusal", extra, code, stderr)
					continue
				}
				if r, _ := utf8.DecodeRuneInString(msg); unicode.IsUpper(r) {
					t.Errorf("%q: %q starts a second sentence after the prefix", extra, stderr)
				}
				if _, stderr, code := runCLI(exampleOf(msg)...); code != 0 {
					t.Errorf("%q: the example of %q is refused: %s", extra, msg, stderr)
				}
			}
		})
	}
}

// The rule where the prefix is added: a sentence's first ordinary word goes on in lower case; a
// name (a product's, a setting's, a lease's, a flag) keeps its capitals.
func TestClauseAfterThePrefix(t *testing.T) {
	for in, want := range map[string]string{
		"There is no team \"x\"; the teams are a, b":     "there is no team \"x\"; the teams are a, b",
		"Node gpu-01 has no valid token":                 "node gpu-01 has no valid token",
		"A PNG is not for a terminal":                    "a PNG is not for a terminal",
		"Something went wrong on our side":               "something went wrong on our side",
		"Slurm's sbatch is not on PATH":                  "Slurm's sbatch is not on PATH",
		"Slurm refused the job":                          "Slurm refused the job",
		"Discord answered 401":                           "Discord answered 401",
		"PostgreSQL is not reachable":                    "PostgreSQL is not reachable",
		"QM_POLICY names a file that does not exist":     "QM_POLICY names a file that does not exist",
		"L-3 is not yours":                               "L-3 is not yours",
		"--week is empty":                                "--week is empty",
		"\"Vision\" is not a team":                       "\"Vision\" is not a team",
		"interrupted (SIGINT)":                           "interrupted (SIGINT)",
		"Kubernetes said no":                             "Kubernetes said no",
		"Monday is not a week; write a week as YEAR-Wnn": "Monday is not a week; write a week as YEAR-Wnn",
		"": "",
	} {
		if got := clause(in); got != want {
			t.Errorf("clause(%q) = %q, want %q", in, got, want)
		}
	}
}
