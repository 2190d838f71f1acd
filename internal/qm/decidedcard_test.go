package qm_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// An approval that hands the lease to a scheduler which starts it out of the decision's
// transaction (Slurm, Kubernetes) tells the approvers (the edited approval card) the lease as it
// stands once the scheduler answered, as the requester and the approver's own reply are told:
// running, not still being started.
func TestTheDecidedCardSaysWhatTheSchedulerAnswered(t *testing.T) {
	ctx := context.Background()
	svc, f, _, notes := schedService(t, qm.Started{State: qm.Active, Node: "l40s-01"})
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 2, Class: "interactive", Duration: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if out.Lease.State != qm.PendingApproval {
		t.Fatalf("2 interactive GPUs, above max_gpus 1: %s, want pending_approval", out.Lease.State)
	}
	dec, err := svc.Decide(ctx, "dana@acme.example", out.Lease.ID, true, "")
	if err != nil {
		t.Fatal(err)
	}
	if f.starts != 1 || dec.Lease.State != qm.Active {
		t.Fatalf("approved: %d starts, lease %s; want it handed to the scheduler and active", f.starts, dec.Lease.State)
	}
	decided := notes.Of(qm.NoticeDecided, out.Lease.ID)
	if len(decided) == 0 {
		t.Fatal("the approvers were not told of the decision")
	}
	for _, n := range decided {
		if n.Lease.State != qm.Active {
			t.Errorf("the approvers' card says %s (reason %q) while the scheduler runs the lease and the approver is told it is active", n.Lease.State, n.Lease.Reason)
		}
	}
}
