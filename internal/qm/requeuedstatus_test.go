package qm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// A running lease whose job is back in the scheduler's queue says in its status what the
// scheduler says of the job now, pass after pass (held by an administrator, then waiting for a
// drained node), as a queued lease does; its owner is told of the requeue once, and the lease
// stays running, paused, until the job runs again.
func TestARequeuedLeaseSaysWhatTheSchedulerSaysNow(t *testing.T) {
	svc, f, clock, notes := schedService(t, qm.Started{State: qm.Queued, Connect: "ssh alice@" + qm.NodePlaceholder})
	ctx := context.Background()
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 2, Class: "train", Duration: 4 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	l := out.Lease
	setJob(f, l.Ref, qm.JobRunning, "", "gpu07", false)
	reconcile(t, svc)
	clock.Advance(30 * time.Minute)
	words := []string{
		"Slurm holds a requeued job back until its begin time (BeginTime)",
		"Slurm: JobHeldAdmin (an administrator holds it: scontrol hold)",
		"Slurm: Resources (gpu07 is drained)",
	}
	for _, w := range words {
		setJob(f, l.Ref, qm.JobPending, w, "", false)
		reconcile(t, svc)
		got := mustGet(t, svc, l.ID)
		if got.State != qm.Active || !qm.Requeued(got) {
			t.Fatalf("requeued (%s): lease %s %q, want active and requeued", w, got.State, got.Reason)
		}
		if !strings.Contains(got.Reason, w) {
			t.Errorf("Slurm now says %q, yet the status says %q", w, got.Reason)
		}
		clock.Advance(5 * time.Minute)
	}
	var requeues int
	for _, k := range notes.Kinds(l.ID) {
		if k == qm.NoticeRequeued {
			requeues++
		}
	}
	if requeues != 1 {
		t.Errorf("told of one requeue %d times: %v", requeues, notes.Kinds(l.ID))
	}
	setJob(f, l.Ref, qm.JobRunning, "", "gpu12", false)
	reconcile(t, svc)
	if got := mustGet(t, svc, l.ID); qm.Halted(got) || got.Node != "gpu12" {
		t.Errorf("running again on gpu12: lease %s %q on %q", got.State, got.Reason, got.Node)
	}
}
