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

// TestPingWithBackupController: with a backup controller (two SlurmctldHost lines) scontrol
// ping prints a line for each: the cluster answers while either is up, so the service stays
// ready when only one of them is down, and is not when both are.
func TestPingWithBackupController(t *testing.T) {
	for out, ok := range map[string]bool{
		"Slurmctld(primary) at ctl-01 is UP\nSlurmctld(backup) at ctl-02 is UP\n":                                                true,
		"Slurmctld(primary) at ctl-01 is UP\nSlurmctld(backup) at ctl-02 is DOWN\n":                                              true,
		"Slurmctld(primary) at ctl-01 is DOWN\nSlurmctld(backup) at ctl-02 is UP\n":                                              true,
		"Slurmctld(primary) at ctl-01 is DOWN\nSlurmctld(backup) at ctl-02 is DOWN\n*****************************************\n": false,
		"Slurmctld(primary) at ctl-01 is DOWN\n":                                                                                 false,
	} {
		b, err := slurm.New(slurm.Config{Policy: examplePolicy(t), Catalog: testCatalog(t),
			Run: func(context.Context, []byte, string, ...string) ([]byte, error) { return []byte(out), nil }})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Ping(context.Background()); (err == nil) != ok {
			t.Errorf("scontrol ping printed %q: Ping says %v, want ready %v", out, err, ok)
		}
	}
}
