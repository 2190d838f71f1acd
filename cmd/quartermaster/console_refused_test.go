package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/slurm/slurmtest"
)

// A batch job that sbatch refuses (here: its class names a partition the cluster does not have)
// never ran and wrote nothing: its owner reads, once, in the reply, why it failed and that nothing
// is charged, and no "Its output is in …" sending them to look for output that is not there; what
// to do if it happens again speaks of asking again, not of /gpu request, which they did not use.
func TestConsoleOnSlurmARefusedJobPointsToNoOutput(t *testing.T) {
	conf := slurmtest.Cluster(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	suffix := hex.EncodeToString(b)
	dir := t.TempDir()
	storage := filepath.Join(dir, "astro")
	if err := os.MkdirAll(storage, 0o755); err != nil {
		t.Fatal(err)
	}
	pol := strings.NewReplacer("PART_NB", "qmt-missing-"+suffix, "PART_HOP", "qmt-missing-"+suffix, "STORAGE", storage).Replace(drainedPolicy)
	polFile := filepath.Join(dir, "helios.yaml")
	if err := os.WriteFile(polFile, []byte(pol), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_CONF", conf)
	t.Setenv("QM_SLURM_INSTANCE", "qmc"+suffix)
	t.Setenv("QM_RECONCILE_INTERVAL", "1s")
	t.Setenv("QM_DATA_DIR", t.TempDir())
	t.Setenv("QM_POLICY", polFile)
	t.Setenv("QM_DATABASE_URL", "")
	script := "ria@helios.example: /gpu submit cuda-smoke class=nb\n:wait 3s\n"
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"console"}, strings.NewReader(script), &out, &errb); code != 0 {
		t.Fatalf("console exited %d: %s", code, errb.String())
	}
	got := out.String()
	if !strings.Contains(got, "L-1 could not be started: the cluster said") || !strings.Contains(got, "nothing is charged") {
		t.Fatalf("ria was not told that sbatch refused L-1 and nothing is charged:\n%s", got)
	}
	if strings.Contains(got, "L-1 failed") {
		t.Errorf("ria is told of the refusal twice, in the reply and in a notice:\n%s", got)
	}
	if strings.Contains(got, "/gpu request meets") {
		t.Errorf("the refusal of a /gpu submit tells its owner what to do if /gpu request meets it again:\n%s", got)
	}
	if strings.Contains(got, "Its output is in") {
		t.Errorf("a job sbatch refused points its owner to its output:\n%s", got)
	}
}
