package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/slurm/slurmtest"
)

// The console on the real Slurm test cluster runs serve's loops on the real clock: a workspace
// whose job fails at once (cuda-smoke finds no nvidia-smi on the test node) is reported to its
// owner as failed, with the exit code and the last lines of its output, within a reconcile
// interval; and no reply ever shows a
// node placeholder or an empty slot.
func TestConsoleOnSlurmReportsAFailedWorkspace(t *testing.T) {
	conf := slurmtest.Cluster(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	t.Setenv("SLURM_CONF", conf)
	t.Setenv("QM_SLURM_INSTANCE", "qmc"+hex.EncodeToString(b))
	t.Setenv("QM_STORAGE_ROOT", t.TempDir())
	t.Setenv("QM_RECONCILE_INTERVAL", "1s")
	t.Setenv("QM_DATA_DIR", t.TempDir())
	t.Setenv("QM_POLICY", "")
	t.Setenv("QM_DATABASE_URL", "")
	script := "alice@acme.example: /gpu submit cuda-smoke\n:wait 8s\nalice@acme.example: /gpu list\n"
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"console", "--backend", "slurm"}, strings.NewReader(script), &out, &errb); code != 0 {
		t.Fatalf("console exited %d: %s", code, errb.String())
	}
	got := out.String()
	for _, bad := range []string{"{node}", "on  until", "until when it starts", "(GPUs )"} {
		if strings.Contains(got, bad) {
			t.Errorf("a reply shows %q:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, "→ alice@acme.example: L-1 failed: its job failed") || !strings.Contains(got, "127") {
		t.Fatalf("alice was not told that L-1 failed, with its exit code:\n%s", got)
	}
	if !strings.Contains(got, "The last lines of its output") || !strings.Contains(got, "nvidia-smi") {
		t.Errorf("the failure does not show the job's last lines of output:\n%s", got)
	}
	if !strings.Contains(got, "State: failed") {
		t.Errorf("/gpu list does not show L-1 failed:\n%s", got)
	}
}
