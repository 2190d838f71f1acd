package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/docs"
)

// A setting of the environment that can stop a command (a wrong value refused, naming it) is one
// that command's --help lists, as docs/configuration.md's "where" says: discord register reads
// single sign-on's settings (they decide whether login, logout and unlink are installed) and the
// workload settings, and refused a wrong one that its help did not name. A setting read without
// being refused counts too: templates render shows QM_SLURM_INSTANCE and QM_KUBE_INSTANCE in the
// script and manifest it prints, and its help did not name them. Each command with a setting runs
// as the built binary with the setting in its environment (runBinary), one after the other, so that
// the test runs in parallel with others and its few hundred commands without the race detector.
func TestASettingThatStopsACommandIsInItsHelp(t *testing.T) {
	t.Parallel()
	pol := filepath.Join("..", "..", "commands", "testdata", "plover.yaml")
	db := "sqlite:" + filepath.Join(t.TempDir(), "q.db")
	if _, stderr, code := runCLI("migrate", "up", "--db", db); code != 0 {
		t.Fatalf("migrate up: %s", stderr)
	}
	for _, cmd := range [][]string{
		{"discord", "register", "--print", "--policy", pol},
		{"templates", "render", "cuda-smoke", "--policy", pol},
		{"policy", "check", pol},
		{"report", "--db", db, "--policy", pol, "--week", "this week"},
		{"migrate", "status", "--db", db},
		{"agent-token", "list", "--db", db},
		{"console", "--db", db, "--policy", pol},
	} {
		plain, _, _ := runCLI(cmd...) // without the setting
		help, _, code := runCLI(append(cmd[:2:2], "--help")...)
		if code != 0 {
			t.Fatalf("%v --help: exit %d", cmd[:2], code)
		}
		for _, r := range confRows(docs.Configuration) {
			for _, e := range r.env {
				if !strings.HasPrefix(e, "QM_") || strings.HasPrefix(e, "QM_TEST") || strings.Contains(help, e) {
					continue
				}
				t.Run(strings.Join(cmd[:2], "-")+"/"+e, func(t *testing.T) {
					code, out, stderr := runBinary(t, ".", []string{e + "=x-invalid"}, cmd...)
					if code != 0 && strings.Contains(stderr, e) {
						t.Errorf("%s=x-invalid stops %v (%s), but its --help does not name %s", e, cmd[:2], strings.TrimSpace(stderr), e)
					}
					// A setting the command reads without refusing it (an instance name, which a
					// preview carries) is one it applies to as well: its value in the output.
					if code == 0 && strings.Contains(out, "x-invalid") && !strings.Contains(plain, "x-invalid") {
						t.Errorf("%s=x-invalid is in %v's output, but its --help does not name %s", e, cmd[:2], e)
					}
				})
			}
		}
	}
}
