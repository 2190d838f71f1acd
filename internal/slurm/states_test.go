package slurm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/slurm"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/workload"
)

// pass runs one reconcile pass and returns the lease as it left it.
func (e *env) pass(id qm.LeaseID) *qm.Lease {
	e.t.Helper()
	if _, err := e.svc.Reconcile(context.Background()); err != nil {
		e.t.Logf("reconcile: %v", err)
	}
	l, err := e.svc.Get(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// waitFor runs reconcile passes until cond holds of the lease.
func (e *env) waitFor(id qm.LeaseID, what string, cond func(*qm.Lease) bool) *qm.Lease {
	e.t.Helper()
	var l *qm.Lease
	e.eventually(id.String()+" "+what, func() bool {
		l = e.pass(id)
		return cond(l)
	})
	return l
}

// restart gives the test a new service on the same database and a new backend, as a restarted
// serve would have.
func (e *env) restart() {
	e.t.Helper()
	backend, err := slurm.New(slurm.Config{Policy: e.svc.Policy, Catalog: testCatalog(e.t), Instance: e.inst,
		Workload: workload.Settings{DefaultTemplate: "sleeper"},
		Env:      []string{"SLURM_CONF=" + e.conf}, Logger: storetest.Logger(e.t)})
	if err != nil {
		e.t.Fatal(err)
	}
	e.backend = backend
	e.svc = &qm.Service{Policy: e.svc.Policy, Store: e.svc.Store, Backend: backend, Clock: e.clock,
		Directory: e.svc.Directory, Notifier: e.notes, Logger: e.svc.Logger}
}

// afterGrant is the notices after the first grant, which the request's own reply makes where
// the job runs at once.
func afterGrant(kinds []qm.NoticeKind) []qm.NoticeKind {
	if len(kinds) > 0 && kinds[0] == qm.NoticeGranted {
		return kinds[1:]
	}
	return kinds
}

// TestRequeuedJobRunsAgainOnItsNode: a running workspace's job that an administrator requeues
// (scontrol requeue) and that runs again on the same node, the only one there is, leaves its
// lease active with its end; its owner is told once that it does not run, and once that it runs
// again, and the lease is judged idle again from then on.
func TestRequeuedJobRunsAgainOnItsNode(t *testing.T) {
	e := newEnv(t)
	l := e.request("alice@acme.example", 1, "interactive", time.Hour, "", nil).Lease
	ran := e.waitLease(l.ID, qm.Active)
	before := time.Now()
	e.slurmCmd("scontrol", "requeue", ran.Ref)
	back := e.waitFor(l.ID, "to be requeued", qm.Requeued)
	if back.State != qm.Active || !back.ExpiresAt.Equal(ran.ExpiresAt) {
		t.Errorf("requeued: %s %q, ends %s (was %s)", back.State, back.Reason, back.ExpiresAt, ran.ExpiresAt)
	}
	// A requeued job waits for a begin time about two minutes on; an administrator may start it now.
	e.beginRequeued(ran.Ref, before, "now")
	e.waitJob(ran.Ref, "RUNNING")
	again := e.waitFor(l.ID, "to run again", func(l *qm.Lease) bool { return !qm.Requeued(l) })
	if again.State != qm.Active || again.Node != ran.Node || !again.ExpiresAt.Equal(ran.ExpiresAt) {
		t.Errorf("running again: %s %q on %s, ends %s", again.State, again.Reason, again.Node, again.ExpiresAt)
	}
	if got := afterGrant(e.notes.Kinds(l.ID)); len(got) != 2 || got[0] != qm.NoticeRequeued || got[1] != qm.NoticeGranted {
		t.Errorf("notices after the grant: %v; want requeued, granted", got)
	}
}

// TestSuspendedJobPausesItsLease: a workspace's job that an administrator suspends (scontrol
// suspend) keeps its GPUs, so its lease stays active, billed, with its end; its owner is told
// once, across a restart of the service, that the workspace is paused, it is not judged idle
// meanwhile, and when the job is resumed the owner is told it runs again.
func TestSuspendedJobPausesItsLease(t *testing.T) {
	e := newEnv(t)
	l := e.request("alice@acme.example", 1, "interactive", time.Hour, "", nil).Lease
	ran := e.waitLease(l.ID, qm.Active)
	e.slurmCmd("scontrol", "suspend", ran.Ref)
	e.waitJob(ran.Ref, "SUSPENDED")
	paused := e.waitFor(l.ID, "to be paused", qm.Suspended)
	if paused.State != qm.Active || !paused.ExpiresAt.Equal(ran.ExpiresAt) || !paused.StartedAt.Equal(ran.StartedAt) ||
		!strings.Contains(paused.Reason, "SUSPENDED") {
		t.Errorf("suspended: %s %q, from %s to %s (was %s to %s)", paused.State, paused.Reason, paused.StartedAt, paused.ExpiresAt, ran.StartedAt, ran.ExpiresAt)
	}
	e.restart()
	e.pass(l.ID)
	if got := afterGrant(e.notes.Kinds(l.ID)); len(got) != 1 || got[0] != qm.NoticeSuspended {
		t.Errorf("notices while suspended, over a restart: %v; want suspended once", got)
	}
	e.slurmCmd("scontrol", "resume", ran.Ref)
	e.waitJob(ran.Ref, "RUNNING")
	again := e.waitFor(l.ID, "to run again", func(l *qm.Lease) bool { return !qm.Suspended(l) })
	if again.State != qm.Active || !again.ExpiresAt.Equal(ran.ExpiresAt) {
		t.Errorf("resumed: %s %q, ends %s", again.State, again.Reason, again.ExpiresAt)
	}
	if got := afterGrant(e.notes.Kinds(l.ID)); len(got) != 2 || got[1] != qm.NoticeGranted {
		t.Errorf("notices once resumed: %v; want suspended, granted", got)
	}
}

// TestStoppedJobPausesItsLease: a workspace's job stopped with a signal (scancel -s STOP; Slurm:
// STOPPED) keeps its GPUs like a suspended one: its lease is paused, not ended, and the inventory
// counts its GPUs as the lease's, not as used outside Quartermaster; a CONT runs it again.
func TestStoppedJobPausesItsLease(t *testing.T) {
	e := newEnv(t)
	l := e.request("alice@acme.example", 2, "train", time.Hour, "", nil).Lease
	ran := e.waitLease(l.ID, qm.Active)
	e.slurmCmd("scancel", "-s", "STOP", ran.Ref)
	e.waitJob(ran.Ref, "STOPPED")
	paused := e.waitFor(l.ID, "to be paused", qm.Suspended)
	if paused.State != qm.Active || !strings.Contains(paused.Reason, "STOPPED") {
		t.Errorf("stopped: %s %q", paused.State, paused.Reason)
	}
	if err := e.backend.RefreshInventory(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, n := range e.backend.Inventory() {
		if n.Class == "train" && n.Used != 0 {
			t.Errorf("inventory with the lease's job stopped: %+v; its GPUs are the lease's, not used by others", n)
		}
	}
	e.slurmCmd("scancel", "-s", "CONT", ran.Ref)
	e.waitFor(l.ID, "to run again", func(l *qm.Lease) bool { return !qm.Suspended(l) })
}

// TestRequeuedWaitIsNotBilledOnSlurm: while a workspace's job waits in Slurm's queue after a
// requeue its lease holds no GPU: the time it holds (what it is billed for) stands still however
// long the wait, an extension meanwhile does not tell its owner of the requeue again, and once the
// job runs again the time held grows again, the wait left out of the lease's bill at its end.
func TestRequeuedWaitIsNotBilledOnSlurm(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	l := e.request("alice@acme.example", 1, "interactive", time.Hour, "", nil).Lease
	ran := e.waitLease(l.ID, qm.Active)
	e.clock.Advance(5 * time.Minute)
	requeued := time.Now()
	e.slurmCmd("scontrol", "requeue", ran.Ref)
	back := e.waitFor(l.ID, "to be requeued", qm.Requeued)
	heldAt := func(l *qm.Lease) time.Duration { return qm.HeldFor(l, l.StartedAt, e.clock.Now()) }
	before := heldAt(back)
	e.clock.Advance(20 * time.Minute)
	if _, err := e.svc.Extend(ctx, "alice@acme.example", l.ID, 30*time.Minute); err != nil {
		t.Fatal(err)
	}
	waited := e.pass(l.ID)
	if !qm.Requeued(waited) {
		t.Fatalf("20 minutes on, extended: %s %q; want still back in the queue", waited.State, waited.Reason)
	}
	if after := heldAt(waited); after != before {
		t.Errorf("20 minutes in Slurm's queue took the time held from %s to %s; want it to stand still", before, after)
	}
	if got := afterGrant(e.notes.Kinds(l.ID)); len(got) != 1 || got[0] != qm.NoticeRequeued {
		t.Errorf("notices after the requeue and an extension: %v; want requeued once", got)
	}
	e.beginRequeued(ran.Ref, requeued, "now")
	e.waitJob(ran.Ref, "RUNNING")
	e.waitFor(l.ID, "to run again", func(l *qm.Lease) bool { return !qm.Requeued(l) })
	e.clock.Advance(10 * time.Minute)
	ended, err := e.svc.Release(ctx, "alice@acme.example", l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if spent, held := ended.EndedAt.Sub(ended.StartedAt), qm.HeldFor(ended, ended.StartedAt, ended.EndedAt); held > spent-20*time.Minute || held < 15*time.Minute {
		t.Errorf("a lease of %s, 20m of it in Slurm's queue after a requeue, held its GPU for %s; want at least 15m and no more than %s", spent, held, spent-20*time.Minute)
	}
}
