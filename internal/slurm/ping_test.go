package slurm_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/slurm"
)

// TestPing: the readiness check answers for the test cluster, and fails within its deadline,
// saying so, when slurmctld cannot be reached (here: a slurm.conf that does not exist, which makes
// scontrol retry for a minute).
func TestPing(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.backend.Ping(ctx); err != nil {
		t.Fatalf("ping the test cluster: %v", err)
	}
	b, err := slurm.New(slurm.Config{Policy: examplePolicy(t), Catalog: testCatalog(t),
		Env: []string{"SLURM_CONF=" + filepath.Join(t.TempDir(), "missing.conf")}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = b.Ping(ctx)
	if err == nil || !strings.Contains(err.Error(), "slurmctld does not answer scontrol ping") {
		t.Fatalf("ping without a cluster: %v", err)
	}
	if ctx.Err() == nil && !strings.Contains(err.Error(), "missing.conf") {
		t.Errorf("the error does not say what scontrol said: %v", err)
	}
}
