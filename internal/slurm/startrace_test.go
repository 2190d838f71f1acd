package slurm_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/qm/qmtest"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/slurm"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/workload"
)

// TestPassDuringStartKeepsTheAddress: the service's reconcile pass runs every few seconds, and
// one often lands while a request's sbatch has returned and Start is still waiting for Slurm's
// decision. The job then already runs under the lease's comment; the pass must leave it to Start,
// so that the lease keeps the address Start rendered and its owner is told how to connect, rather
// than a pass adopting the job first and the workspace becoming active with no address at all.
func TestPassDuringStartKeepsTheAddress(t *testing.T) {
	passDuringStart(t, storetest.SQLite(t), false)
}

// TestAnotherReplicasPassDuringStartKeepsTheAddress: the same with two replicas of serve on one
// PostgreSQL database, each with its own reconcile loop: the pass of the replica that did not
// take the request lands while the other one's Start waits for Slurm's decision. It leaves the
// job to that Start as well.
func TestAnotherReplicasPassDuringStartKeepsTheAddress(t *testing.T) {
	passDuringStart(t, storetest.Postgres(t), true)
}

// passDuringStart requests a workspace and runs a reconcile pass right after its sbatch, once
// its job runs: the pass of the same service, or of a second one on the same database.
func passDuringStart(t *testing.T, db string, otherReplica bool) {
	conf := slurmCluster(t)
	p := examplePolicy(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	inst := "qmt" + hex.EncodeToString(b)
	e := &env{t: t, conf: conf, clock: sim.NewClock(time.Now().UTC()), notes: &qmtest.NoticeLog{}, inst: inst}
	var pass func() // a reconcile pass, run right after sbatch once the job runs
	run := func(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		out, err := cmd.Output()
		if name == "sbatch" && err == nil && pass != nil {
			ref, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
			e.waitJob(ref, "RUNNING")
			done := make(chan struct{})
			go func() { defer close(done); pass() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Error("the reconcile pass during Start did not finish")
			}
		}
		return out, err
	}
	backend, err := slurm.New(slurm.Config{Policy: p, Catalog: testCatalog(t), Instance: inst,
		Workload: workload.Settings{DefaultTemplate: "sleeper"}, Run: run, Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	e.backend = backend
	e.svc = &qm.Service{Policy: p, Store: storetest.Open(t, db), Backend: backend, Clock: e.clock,
		Directory: p, Notifier: e.notes, Logger: storetest.Logger(t)}
	t.Cleanup(e.cancelAll)
	passer := e.svc
	if otherReplica {
		// The other replica: its own backend, store and clock, on the same cluster and database.
		other, err := slurm.New(slurm.Config{Policy: p, Catalog: testCatalog(t), Instance: inst,
			Workload: workload.Settings{DefaultTemplate: "sleeper"}, Env: []string{"SLURM_CONF=" + conf}, Logger: storetest.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		passer = &qm.Service{Policy: p, Store: storetest.Open(t, db), Backend: other, Clock: sim.NewClock(e.clock.Now()),
			Directory: p, Notifier: e.notes, Logger: storetest.Logger(t)}
	}
	ctx := context.Background()
	for _, s := range []*qm.Service{e.svc, passer} { // the inventory, so the lease is placed
		if _, err := s.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
	}
	pass = func() {
		if _, err := passer.Reconcile(ctx); err != nil {
			t.Errorf("reconcile during start: %v", err)
		}
	}

	out := e.request("bob@acme.example", 1, "interactive", time.Hour, "", nil)
	pass = nil
	l := e.waitLease(out.Lease.ID, qm.Active)
	host := e.nodeName()
	if !strings.Contains(l.Connect, "@"+host) {
		t.Errorf("%s is active with connect %q; want the address on %s", l.ID, l.Connect, host)
	}
	granted := e.notes.Of(qm.NoticeGranted, l.ID)
	if out.Lease.State != qm.Active && len(granted) == 0 {
		t.Fatalf("%s became active (request said %s) and its owner was not told", l.ID, out.Lease.State)
	}
	for _, n := range granted {
		if !strings.Contains(n.Lease.Connect, "@"+host) {
			t.Errorf("%s: the owner was told it is ready with connect %q; want the address on %s", l.ID, n.Lease.Connect, host)
		}
	}
	if out.Lease.State == qm.Active && !strings.Contains(out.Lease.Connect, "@"+host) {
		t.Errorf("%s: the request's reply has connect %q; want the address on %s", l.ID, out.Lease.Connect, host)
	}
}
