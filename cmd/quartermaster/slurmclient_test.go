package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runQMWithin is runQM ending the command after d, for one that would otherwise serve on.
func runQMWithin(d time.Duration, args ...string) (code int, stdout, stderr string) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out, errb bytes.Buffer
	code = run(ctx, args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// serve and the console on the Slurm backend, on a host without Slurm's client commands, refuse
// at start in one sentence naming the setting, what is missing, and what works, instead of
// serving with only /readyz to show that no lease can ever start.
func TestTheSlurmBackendWithoutSlurmsCommandsIsRefusedAtStart(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		env     string
		setting string
		sim     string
	}{
		{name: "serve --backend", args: []string{"serve", "--demo", "--backend", "slurm", "--http", "127.0.0.1:0"}, setting: "--backend slurm", sim: "--backend sim"},
		{name: "serve QM_BACKEND", args: []string{"serve", "--demo", "--http", "127.0.0.1:0"}, env: "slurm", setting: "QM_BACKEND=slurm", sim: "QM_BACKEND=sim"},
		{name: "console --backend", args: []string{"console", "--backend", "slurm"}, setting: "--backend slurm", sim: "--backend sim"},
		{name: "serve, the policy's backend", args: []string{"serve", "--http", "127.0.0.1:0"}, env: "policy", setting: "the policy's backend: slurm", sim: "--backend sim"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env == "policy" {
				src, err := os.ReadFile(filepath.Join(repoRoot, "docs", "quartermaster.example.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				pol := filepath.Join(t.TempDir(), "slurm.yaml")
				if err := os.WriteFile(pol, []byte(strings.Replace(string(src), "\nbackend: sim", "\nbackend: slurm", 1)), 0o600); err != nil {
					t.Fatal(err)
				}
				c.args, c.env = append(c.args, "--policy", pol), ""
			}
			clearEnv(t)
			t.Setenv("PATH", t.TempDir()) // no sbatch, no scontrol
			t.Setenv("QM_DATA_DIR", t.TempDir())
			if c.env != "" {
				t.Setenv("QM_BACKEND", c.env)
			}
			code, _, stderr := runQMWithin(5*time.Second, c.args...)
			msg := strings.TrimSpace(stderr)
			if code == 0 || strings.Count(msg, "\n") != 0 {
				t.Fatalf("exit %d, want a refusal in one line: %q", code, msg)
			}
			for _, w := range []string{c.setting, "sbatch", "PATH", "slurm-client", c.sim} {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
		})
	}
}

// With Slurm's commands there but its controller not answering, serve starts (the controller may
// come back) and says so once in its log at start.
func TestServeOnSlurmWithItsControllerDownStartsAndSaysSo(t *testing.T) {
	bin := t.TempDir()
	for name, script := range map[string]string{
		"sbatch":   "echo 'sbatch: error: Batch job submission failed: Unable to contact slurm controller' >&2; exit 1",
		"squeue":   "echo 'slurm_load_jobs error: Unable to contact slurm controller' >&2; exit 1",
		"sinfo":    "echo 'slurm_load_partitions: Unable to contact slurm controller' >&2; exit 1",
		"scancel":  "exit 1",
		"scontrol": "echo 'Slurmctld(primary) at head is DOWN'; exit 1",
	} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	o := serveOptions{}
	o.app.flags.backend = "slurm"
	got := servedLog(t, o)
	if n := strings.Count(got, "Slurm's controller does not answer"); n != 1 {
		t.Errorf("the log says %d times that the controller does not answer, want once:\n%s", n, got)
	}
	for _, w := range []string{"level=WARN", "scontrol ping", "/readyz"} {
		if !strings.Contains(got, w) {
			t.Errorf("the log does not say %q:\n%s", w, got)
		}
	}
}
