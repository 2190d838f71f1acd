// Package slurmtest finds the Slurm cluster that tests run against (the one `make slurm-up`
// starts) and gives each test the cluster to itself, across test binaries: the cluster has one
// node and its GPUs, so two packages' tests submitting at once would starve each other.
package slurmtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Cluster returns the slurm.conf of the test cluster: SLURM_CONF from the environment, else the
// one `make slurm-up` leaves in .slurm/ at the repository root (found from the test's directory).
// Without one the test is skipped with a note on how to start it, except under CI=true, where a
// missing cluster fails. The test holds the cluster alone until it ends.
func Cluster(t testing.TB) (conf string) {
	t.Helper()
	missing := func(why string) string {
		msg := "no Slurm to test against (" + why + "); run `make slurm-up` and `. .slurm/env` (sets SLURM_CONF)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
		return ""
	}
	if _, err := exec.LookPath("sbatch"); err != nil {
		return missing("sbatch is not installed")
	}
	conf = os.Getenv("SLURM_CONF")
	fromEnv := conf != ""
	if !fromEnv {
		local, ok := findUp(filepath.Join(".slurm", "etc", "slurm.conf"))
		if !ok {
			return missing("SLURM_CONF is not set")
		}
		conf = local
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sinfo", "-h", "-o", "%P")
	cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if fromEnv {
			t.Fatalf("SLURM_CONF=%s is set but sinfo fails: %v\n%s", conf, err, out)
		}
		return missing("the cluster in .slurm/ is not running: " + strings.TrimSpace(string(out)))
	}
	for _, p := range []string{"interactive", "train"} {
		if !strings.Contains(string(out), p) {
			t.Fatalf("cluster at %s has no %s partition (sinfo: %s); the test cluster comes from `make slurm-up`", conf, p, out)
		}
	}
	hold(t, filepath.Join(filepath.Dir(filepath.Dir(conf)), ".testlock"))
	idle(t, conf)
	return conf
}

// idle waits, up to three minutes, until the cluster runs no job, cancelling any that a test
// before this one left behind (every job on the test cluster is a test's), so that each test
// starts on an idle node. Most are jobs the test before cancelled as it ended, still COMPLETING:
// on a busy machine that takes seconds, during which they hold the node's GPUs and hold up this
// test's jobs; while the race detector's builds load two cores, slurmd has been seen stalled for a
// minute and a cancelled job COMPLETING for two.
func idle(t testing.TB, conf string) {
	t.Helper()
	squeue := func(args ...string) string {
		cmd := exec.Command("squeue", append([]string{"-h"}, args...)...)
		cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
		out, _ := cmd.Output()
		return strings.TrimSpace(string(out))
	}
	deadline := time.Now().Add(3 * time.Minute)
	cancelled := false
	for {
		jobs := squeue("-o", "%i")
		if jobs == "" {
			return
		}
		if !cancelled {
			t.Logf("slurmtest: waiting for the jobs a test before this one left: %s", squeue("-o", "%i %T %j"))
			cmd := exec.Command("scancel", strings.Fields(jobs)...)
			cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
			_ = cmd.Run()
			cancelled = true
		}
		if time.Now().After(deadline) {
			t.Logf("slurmtest: the cluster still runs jobs after three minutes: %s", squeue("-o", "%i %T %j"))
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// hold takes an exclusive lock on path until the test ends.
func hold(t testing.TB, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatalf("slurmtest: lock %s: %v", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("slurmtest: lock %s: %v", path, err)
	}
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}

// findUp looks for rel in the working directory and its parents.
func findUp(rel string) (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
