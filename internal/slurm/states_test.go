package slurm_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
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
	e.slurmCmd("scontrol", "requeue", ran.Ref)
	back := e.waitFor(l.ID, "to be requeued", qm.Requeued)
	if back.State != qm.Active || !back.ExpiresAt.Equal(ran.ExpiresAt) {
		t.Errorf("requeued: %s %q, ends %s (was %s)", back.State, back.Reason, back.ExpiresAt, ran.ExpiresAt)
	}
	// A requeued job waits for a begin time about two minutes on; an administrator may start it now.
	e.slurmCmd("scontrol", "update", "JobId="+ran.Ref, "StartTime=now")
	e.waitJob(ran.Ref, "RUNNING")
	again := e.waitFor(l.ID, "to run again", func(l *qm.Lease) bool { return !qm.Requeued(l) })
	if again.State != qm.Active || again.Node != ran.Node || !again.ExpiresAt.Equal(ran.ExpiresAt) {
		t.Errorf("running again: %s %q on %s, ends %s", again.State, again.Reason, again.Node, again.ExpiresAt)
	}
	if got := afterGrant(e.notes.Kinds(l.ID)); len(got) != 2 || got[0] != qm.NoticeRequeued || got[1] != qm.NoticeGranted {
		t.Errorf("notices after the grant: %v; want requeued, granted", got)
	}
}
