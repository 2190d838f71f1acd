package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/slurm"
)

// TestARestartedProcessAdoptsItsPredecessorsJobAtOnce: a process on this host was killed after
// sbatch accepted a lease's job and before it recorded it, its claim on the submission still
// good for two minutes. The process that starts after it on the same host sees that the claim's
// process no longer runs, releases it, and its first reconcile pass adopts the job: the lease
// is active on the job's node at once, not after the claim lapses. A claim of a process on
// another host, and one of this very process, are left to lapse.
func TestARestartedProcessAdoptsItsPredecessorsJobAtOnce(t *testing.T) {
	t.Parallel()
	a, err := NewApp(context.Background(), appOptions{flags: commonFlags{db: "sqlite:" + filepath.Join(t.TempDir(), "qm.db")}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cat, err := templateCatalog()
	if err != nil {
		t.Fatal(err)
	}
	b, err := slurm.New(slurm.Config{Policy: a.Policy, Catalog: cat, Run: func(_ context.Context, _ []byte, name string, args ...string) ([]byte, error) {
		if name == "squeue" && len(args) == 1 && args[0] == "--json" {
			return []byte(`{"jobs": [{"job_id": 77, "comment": "qm:L-1", "job_state": "RUNNING", "nodes": "gpu01"},
				{"job_id": 78, "comment": "qm:L-2", "job_state": "RUNNING", "nodes": "gpu02"},
				{"job_id": 79, "comment": "qm:L-3", "job_state": "RUNNING", "nodes": "gpu03"}], "errors": []}`), nil
		}
		return nil, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	a.Service.Backend = b

	// A process id that no process has now: a child that has exited.
	child := exec.Command("true")
	if err := child.Run(); err != nil {
		t.Skip("cannot run true to find a stopped process id:", err)
	}
	host, _ := os.Hostname()
	dead := host + "/" + strconv.Itoa(child.Process.Pid) + "@1764000000000000000"
	ctx := context.Background()
	now := a.Clock.Now()
	for _, by := range []string{dead, "elsewhere.example/4242@1", a.Service.Submitter} {
		err := a.Store.Update(ctx, nil, func(tx qm.Tx) error {
			return tx.CreateLease(ctx, &qm.Lease{Kind: qm.KindWorkspace, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1,
				Duration: time.Hour, State: qm.Provisioning, CreatedAt: now, SubmittingUntil: now.Add(2 * time.Minute), SubmittingBy: by})
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	releaseStoppedSubmitters(ctx, a, a.Logger)
	if _, err := a.Service.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[qm.LeaseID]struct {
		state qm.State
		ref   string
	}{1: {qm.Active, "77"}, 2: {qm.Provisioning, ""}, 3: {qm.Provisioning, ""}} {
		l, err := a.Service.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if l.State != want.state || l.Ref != want.ref {
			t.Errorf("%s (claimed by %s) is %s with job %q after the first pass; want %s with %q", id, l.SubmittingBy, l.State, l.Ref, want.state, want.ref)
		}
	}
}
