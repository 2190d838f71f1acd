package qm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// TestARestartedJobIsToldOnce: a running lease whose job the scheduler lost and started again
// between two passes (a Kubernetes Job's new pod running after its pod was lost with its node)
// is told so once, with the scheduler's reason and where it runs now; a job that restarted before
// its lease ever ran is no restart to its owner. A running lease whose job is starting again
// (placed, not running) does not run meanwhile: it is back in the queue, and told where it runs
// once it does.
func TestARestartedJobIsToldOnce(t *testing.T) {
	ctx := context.Background()
	svc, f, clock, notes := schedService(t, qm.Started{State: qm.Queued, Reason: "Slurm: Resources"})
	l := mustRequest(t, svc, "alice@acme.example", 1, "interactive")
	reconcile := func() {
		t.Helper()
		if _, err := svc.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
	}
	first := l.CreatedAt.Add(2 * time.Minute)
	run := func(node string, restarted time.Time, state qm.JobState, reason string) {
		f.Remove(l.Ref)
		f.Add(qm.Job{Lease: l.ID, Ref: l.Ref, State: state, Node: node, Reason: reason, StartedAt: first, Restarted: restarted})
	}

	// Its first pod started 2 minutes after the request, failed, and another one runs: the lease
	// runs from its first pod's start, but its owner heard of none before.
	clock.Advance(10 * time.Minute)
	run("gpu07", clock.Now().Add(-time.Minute), qm.JobRunning, "its first try failed")
	reconcile()
	reconcile()
	if got := mustGet(t, svc, l.ID); got.State != qm.Active || got.Node != "gpu07" {
		t.Fatalf("running: lease %s %q on %q", got.State, got.Reason, got.Node)
	}
	if k := notes.Kinds(l.ID); len(k) != 1 || k[0] != qm.NoticeGranted {
		t.Errorf("a job restarted before its lease ran: owner told %v, want granted only", k)
	}

	clock.Advance(20 * time.Minute)
	run("gpu08", clock.Now().Add(-10*time.Second), qm.JobRunning, "Kubernetes: its pod is gone; a new pod runs on gpu08")
	for range 3 {
		reconcile()
		clock.Advance(5 * time.Second)
	}
	got := mustGet(t, svc, l.ID)
	if got.State != qm.Active || qm.Halted(got) || got.Node != "gpu08" || got.Reason != "its workspace restarted: Kubernetes: its pod is gone; a new pod runs on gpu08" {
		t.Errorf("restarted on gpu08: lease %s %q on %q", got.State, got.Reason, got.Node)
	}
	if k := notes.Kinds(l.ID); len(k) != 2 || k[1] != qm.NoticeRestarted {
		t.Errorf("restarted: owner told %v, want granted, then restarted once", k)
	}

	clock.Advance(20 * time.Minute)
	run("gpu09", time.Time{}, qm.JobStarting, "starting on gpu09 (Kubernetes: ContainerCreating)")
	reconcile()
	if got := mustGet(t, svc, l.ID); !qm.Requeued(got) || !strings.Contains(got.Reason, "starting on gpu09") {
		t.Errorf("starting again: lease %s %q, want back in the queue", got.State, got.Reason)
	}
	clock.Advance(time.Minute)
	run("gpu09", clock.Now().Add(-10*time.Second), qm.JobRunning, "Kubernetes: its pod is gone; a new pod runs on gpu09")
	reconcile()
	reconcile()
	if got := mustGet(t, svc, l.ID); got.State != qm.Active || qm.Halted(got) || got.Node != "gpu09" {
		t.Errorf("running again: lease %s %q on %q", got.State, got.Reason, got.Node)
	}
	if k := notes.Kinds(l.ID); len(k) != 4 || k[2] != qm.NoticeRequeued || k[3] != qm.NoticeGranted {
		t.Errorf("owner told %v, want granted, restarted, requeued, granted", k)
	}
}
