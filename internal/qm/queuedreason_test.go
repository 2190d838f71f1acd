package qm_test

import (
	"context"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// TestAQueuedLeaseSaysWhyItWaitsNow: a queued lease's reason, which /gpu status shows, follows
// the scheduler's current word on its job (Slurm's pending reason moving from Priority to
// Resources, a multi-node Kubernetes lease going from "1 of 2 pods running; waiting for 1
// (Kubernetes: Unschedulable: …)" to "… (starting on gpu-c)"), without a new event in its
// history or another message to its owner; a job starting without a word keeps the last one.
func TestAQueuedLeaseSaysWhyItWaitsNow(t *testing.T) {
	ctx := context.Background()
	svc, f, _, notes := schedService(t, qm.Started{State: qm.Queued, Reason: "Slurm: Priority"})
	l := mustRequest(t, svc, "alice@acme.example", 1, "interactive")
	if l.State != qm.Queued {
		t.Fatalf("lease %s %q", l.State, l.Reason)
	}
	before, err := svc.History(ctx, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		state qm.JobState
		say   string
		want  string
	}{
		{qm.JobPending, "Slurm: Resources", "waiting in the scheduler's queue: Slurm: Resources"},
		{qm.JobPending, "1 of 2 pods running; waiting for 1 (Kubernetes: Unschedulable: 0/6 nodes are available)", "waiting in the scheduler's queue: 1 of 2 pods running; waiting for 1 (Kubernetes: Unschedulable: 0/6 nodes are available)"},
		{qm.JobStarting, "1 of 2 pods running; waiting for 1 (starting on gpu-c)", "waiting in the scheduler's queue: 1 of 2 pods running; waiting for 1 (starting on gpu-c)"},
		{qm.JobStarting, "", "waiting in the scheduler's queue: 1 of 2 pods running; waiting for 1 (starting on gpu-c)"},
	} {
		f.Set(l.Ref, step.state, step.say)
		if _, err := svc.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if got := mustGet(t, svc, l.ID); got.State != qm.Queued || got.Reason != step.want {
			t.Errorf("job %s %q: lease %s %q, want queued %q", step.state, step.say, got.State, got.Reason, step.want)
		}
	}
	after, err := svc.History(ctx, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("history grew from %d to %d events with the reason", len(before), len(after))
	}
	queued := 0
	for _, k := range notes.Kinds(l.ID) {
		if k == qm.NoticeQueued {
			queued++
		}
	}
	if queued > 1 {
		t.Errorf("owner told %v, want queued once at most", notes.Kinds(l.ID))
	}
}
