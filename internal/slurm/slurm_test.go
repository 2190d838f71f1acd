package slurm_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// These tests run the lease service against the real one-node test cluster of `make slurm-up`
// (GPUs h100:8 in partition train and l40s:4 in partition interactive). Every wait polls squeue
// at 100 ms intervals up to a generous deadline; nothing here measures speed.

// TestRequestBecomesSlurmJob: a request becomes a running job with the class's partition, GRES and
// the lease's time limit, its comment carries the lease id and no account is set (accounting is
// off); release cancels it.
func TestRequestBecomesSlurmJob(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	for _, c := range []struct {
		user, class, gres string
		gpus              int
		d                 time.Duration
	}{
		{"alice@acme.example", "train", "gpu:h100:2", 2, 90 * time.Minute},
		{"bob@acme.example", "interactive", "gpu:l40s:1", 1, time.Hour},
	} {
		out := e.request(c.user, c.gpus, c.class, c.d, "", nil)
		l := e.waitLease(out.Lease.ID, qm.Active)
		if l.Ref == "" || l.Node == "" {
			t.Fatalf("%s: active without job or node: %+v", l.ID, l)
		}
		j := e.job(l.Ref)
		if j.State != "RUNNING" || j.Partition != c.class || !strings.HasSuffix(j.TRESPerNode, c.gres) ||
			j.TimeLimit != c.d || j.Comment != e.inst+":"+l.ID.String() || (j.Account != "" && j.Account != "(null)") {
			t.Errorf("%s: job %s is %+v; want RUNNING in %s with %s for %s, comment %s:%s, no account", l.ID, l.Ref, j, c.class, c.gres, c.d, e.inst, l.ID)
		}
		if !strings.HasPrefix(j.Name, "qm-"+strings.ToLower(l.ID.String())+"-sleeper") {
			t.Errorf("%s: job name %q does not carry the lease id", l.ID, j.Name)
		}
		if l.Node != j.Nodes || !strings.Contains(l.Connect, "@"+host) || strings.Contains(l.Connect, qm.NodePlaceholder) {
			t.Errorf("%s: node %q, connect %q; want node %s", l.ID, l.Node, l.Connect, j.Nodes)
		}
		if _, err := e.svc.Release(ctx, c.user, l.ID); err != nil {
			t.Fatal(err)
		}
		e.waitJob(l.Ref, "CANCELLED")
		// A later pass sees the cancelled job of a released lease and leaves both alone.
		rep, err := e.svc.Reconcile(ctx)
		if err != nil || rep.Ended+rep.Vanished+rep.Cancelled != 0 {
			t.Errorf("reconcile after release: %v, %v", rep, err)
		}
		if l, _ := e.svc.Get(ctx, l.ID); l.State != qm.Released {
			t.Errorf("%s is %s after release", l.ID, l.State)
		}
	}
}

// TestQueuedUntilGPUsFree: with the train GPUs full, a request is queued: by the service, which
// knows from the inventory that they are full and submits nothing yet (and not twice over its
// ticks); it starts, on the node, when the other lease ends.
func TestQueuedUntilGPUsFree(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.svc.Reconcile(ctx); err != nil { // reads the inventory
		t.Fatal(err)
	}
	a := e.request("alice@acme.example", 8, "train", time.Hour, "", nil).Lease
	a = e.waitLease(a.ID, qm.Active)

	out := e.request("bob@acme.example", 1, "train", time.Hour, "", nil)
	b := out.Lease
	if b.State != qm.Queued || b.Ref != "" || strings.Contains(b.Connect, qm.NodePlaceholder) {
		t.Fatalf("with the GPUs full, %s is %s (ref %q, connect %q); want queued by the service, nothing submitted", b.ID, b.State, b.Ref, b.Connect)
	}
	for range 3 {
		if err := e.svc.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := e.svc.Get(ctx, b.ID); got.State != qm.Queued || got.Ref != "" {
		t.Fatalf("after ticks %s is %s with job %q; want still queued without a job", b.ID, got.State, got.Ref)
	}
	if n := e.jobsOf(b.ID); n != 0 {
		t.Fatalf("%s has %d jobs while it waits in the service's queue", b.ID, n)
	}

	if _, err := e.svc.Release(ctx, "alice@acme.example", a.ID); err != nil {
		t.Fatal(err)
	}
	b = e.waitLease(b.ID, qm.Active)
	if j := e.job(b.Ref); j.State != "RUNNING" || j.Nodes != e.nodeName() {
		t.Fatalf("job %s is %s on %q after %s became active", b.Ref, j.State, j.Nodes, b.ID)
	}
	if n := e.jobsOf(b.ID); n != 1 {
		t.Errorf("%s has %d jobs; a lease is submitted once", b.ID, n)
	}
	if len(e.notes.Of(qm.NoticeGranted, b.ID)) != 1 {
		t.Errorf("%s's owner was told %d times that it started", b.ID, len(e.notes.Of(qm.NoticeGranted, b.ID)))
	}
}

func (e *env) jobsOf(id qm.LeaseID) int {
	jobs, err := e.backend.Jobs(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	n := 0
	for _, j := range jobs {
		if j.Lease == id {
			n++
		}
	}
	return n
}

// TestExpiryEndsJob: when a lease reaches its end the service ends its job.
func TestExpiryEndsJob(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	l := e.request("alice@acme.example", 1, "interactive", time.Hour, "", nil).Lease
	l = e.waitLease(l.ID, qm.Active)
	e.clock.Set(l.ExpiresAt)
	if err := e.svc.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.svc.Get(ctx, l.ID); got.State != qm.Expired {
		t.Fatalf("%s is %s at its end time", l.ID, got.State)
	}
	e.waitJob(l.Ref, "CANCELLED")
	if len(e.notes.Of(qm.NoticeExpired, l.ID)) != 1 {
		t.Error("the owner was not told of the expiry")
	}
}

// TestBatchJobEnds: a batch job from a template ends the lease by itself: exit 0 releases it,
// another exit code fails it; the owner is told either way.
func TestBatchJobEnds(t *testing.T) {
	e := newEnv(t)
	ok := e.request("alice@acme.example", 1, "train", time.Hour, "nap", map[string]string{"seconds": "1"}).Lease
	bad := e.request("bob@acme.example", 1, "train", time.Hour, "nap", map[string]string{"seconds": "1", "code": "3"}).Lease
	ok = e.waitLease(ok.ID, qm.Released)
	bad = e.waitLease(bad.ID, qm.Failed)
	if n := e.notes.Of(qm.NoticeFinished, ok.ID); len(n) != 1 || !strings.Contains(ok.Reason, "finished") {
		t.Errorf("%s: reason %q, %d finished notices", ok.ID, ok.Reason, len(n))
	}
	if n := e.notes.Of(qm.NoticeFailed, bad.ID); len(n) != 1 || !strings.Contains(bad.Reason, "exit code 3") {
		t.Errorf("%s: reason %q, %d failed notices", bad.ID, bad.Reason, len(n))
	}
}

// TestReconcileOrphan: a service killed between submitting a job and committing its lease leaves
// a job whose lease is not in the database; the next reconcile pass cancels it. A job of a lease
// that ended (its cancel lost in a crash) is cancelled the same way.
func TestReconcileOrphan(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ended := e.storeLease(qm.Released)
	var refs []string
	for _, id := range []qm.LeaseID{4242, ended.ID} {
		refs = append(refs, e.submitRaw(id))
	}
	rep, err := e.svc.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Cancelled != 2 {
		t.Errorf("reconcile cancelled %d jobs, want 2: %v", rep.Cancelled, rep)
	}
	for _, ref := range refs {
		e.waitJob(ref, "CANCELLED")
	}
	if got, _ := e.svc.Get(ctx, ended.ID); got.State != qm.Released {
		t.Errorf("the ended lease became %s", got.State)
	}
}

// TestReconcileAdopts: a service killed between submitting a job and recording its id leaves a
// provisioning lease with a job it does not know; the reconcile pass adopts the job and the lease
// becomes active with the job's node.
func TestReconcileAdopts(t *testing.T) {
	e := newEnv(t)
	l := e.storeLease(qm.Provisioning)
	ref := e.submitRaw(l.ID)
	l = e.waitLease(l.ID, qm.Active)
	if l.Ref != ref || l.Node == "" {
		t.Errorf("%s adopted job %q on %q, want job %s", l.ID, l.Ref, l.Node, ref)
	}
}

// TestCancelledBehindBack: a job cancelled with scancel outside Quartermaster fails its lease, and
// the owner is told why.
func TestCancelledBehindBack(t *testing.T) {
	e := newEnv(t)
	l := e.request("alice@acme.example", 1, "interactive", time.Hour, "", nil).Lease
	l = e.waitLease(l.ID, qm.Active)
	e.slurmCmd("scancel", l.Ref)
	l = e.waitLease(l.ID, qm.Failed)
	n := e.notes.Of(qm.NoticeFailed, l.ID)
	if len(n) != 1 || n[0].Lease.User != "alice@acme.example" || !strings.Contains(n[0].Reason, "cancelled") {
		t.Fatalf("failed notices %+v", n)
	}
}

// storeLease writes a lease straight to the database, as a service that stopped half-way would
// have left it.
func (e *env) storeLease(state qm.State) *qm.Lease {
	e.t.Helper()
	ctx := context.Background()
	now := e.clock.Now()
	l := &qm.Lease{User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, Duration: time.Hour,
		State: state, CreatedAt: now, DataClass: "public"}
	if state.Ended() {
		l.EndedAt = now
	}
	err := e.svc.Store.Update(ctx, nil, func(tx qm.Tx) error {
		if err := tx.CreateLease(ctx, l); err != nil {
			return err
		}
		return tx.AddEvent(ctx, &qm.Event{Lease: l.ID, At: now, Actor: qm.SystemActor, To: state})
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// submitRaw submits a sleeping job carrying lease id's comment, behind the service's back.
func (e *env) submitRaw(id qm.LeaseID) string {
	e.t.Helper()
	out := e.slurmCmd("sbatch", "--parsable", "-p", "interactive", "--gres=gpu:l40s:1", "-t", "10",
		"--comment="+e.backend.Comment(id), "-o", "/dev/null", "--wrap", "sleep 600")
	ref, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	return ref
}
