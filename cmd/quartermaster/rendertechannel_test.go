package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// templates render --team takes a team's channel as report --team and chat do: the lease is of
// the team whose channel it is (its storage), and a channel mistyped is answered with that team,
// not the policy's first.
func TestTemplatesRenderTakesATeamsChannel(t *testing.T) {
	t.Parallel()
	pol := filepath.Join("..", "..", "commands", "testdata", "harbor.yaml")
	byName, stderr, code := runCLI("templates", "render", "cuda-smoke", "--backend", "slurm", "--policy", pol, "--team", "kelp")
	if code != 0 {
		t.Fatalf("--team kelp: exit %d: %s", code, stderr)
	}
	byChannel, stderr, code := runCLI("templates", "render", "cuda-smoke", "--backend", "slurm", "--policy", pol, "--team", "#kelp-forest")
	if code != 0 || byChannel != byName {
		t.Errorf("--team '#kelp-forest', the channel of team kelp: exit %d, %s\nwant the script of --team kelp:\n%s\ngot:\n%s", code, stderr, byName, byChannel)
	}
	_, stderr, code = runCLI("templates", "render", "cuda-smoke", "--backend", "slurm", "--policy", pol, "--team", "#kelp-forestx")
	ex := exampleOf(stderr)
	if code != 2 || !strings.Contains(strings.Join(ex, " "), "--team kelp") {
		t.Errorf("--team '#kelp-forestx': exit %d, %q; want a refusal whose example names team kelp", code, stderr)
	}
}
