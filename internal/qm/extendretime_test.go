package qm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// TestExtendRaisesTheJobsTimeLimit: extending a running lease raises its job's time limit in the
// scheduler at once, to the lease's new length, so the job is not ended at the old limit.
func TestExtendRaisesTheJobsTimeLimit(t *testing.T) {
	svc, f, _, _ := schedService(t, qm.Started{State: qm.Active, Node: "gpu01"})
	ctx := context.Background()
	l := mustRequest(t, svc, "alice@acme.example", 1, "interactive")
	if l.State != qm.Active || l.Ref == "" {
		t.Fatalf("the lease is %s with job %q", l.State, l.Ref)
	}
	out, err := svc.Extend(ctx, "alice@acme.example", l.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.retimes[l.Ref]; got != 3*time.Hour {
		t.Errorf("the job's time limit is %s after a 2h lease was extended by 1h; want 3h", got)
	}
	if !out.Lease.ExpiresAt.Equal(l.ExpiresAt.Add(time.Hour)) {
		t.Errorf("the lease ends %s, want %s", out.Lease.ExpiresAt, l.ExpiresAt.Add(time.Hour))
	}
}

// TestExtendRefusedByTheScheduler: when the scheduler refuses the longer time limit (Slurm lets
// only operators raise one), the extension is refused with a sentence saying it did not reach
// the scheduler, and the lease's end does not move.
func TestExtendRefusedByTheScheduler(t *testing.T) {
	svc, f, _, _ := schedService(t, qm.Started{State: qm.Active, Node: "gpu01"})
	ctx := context.Background()
	l := mustRequest(t, svc, "alice@acme.example", 1, "interactive")
	f.mu.Lock()
	f.retimeErr = errors.New("scontrol: error: Access/permission denied for job 101")
	f.mu.Unlock()
	_, err := svc.Extend(ctx, "alice@acme.example", l.ID, time.Hour)
	if err == nil {
		t.Fatal("the extension was accepted though the scheduler refused the time limit")
	}
	if msg := qm.ErrorMessage(err); !strings.Contains(msg, "not extended") || !strings.Contains(msg, "scheduler") {
		t.Errorf("the refusal says %q", msg)
	}
	after := mustGet(t, svc, l.ID)
	if !after.ExpiresAt.Equal(l.ExpiresAt) || after.Duration != l.Duration || after.Extensions != 0 {
		t.Errorf("the lease moved: ends %s (was %s), %s long, %d extensions", after.ExpiresAt, l.ExpiresAt, after.Duration, after.Extensions)
	}
}

// TestConcurrentExtensionsLeaveOneWaiting: extensions of one lease beyond its class's limit,
// asked at once (a command typed twice, a button pressed on two messages), leave one request for
// the budget owners; the others are refused with its name.
func TestConcurrentExtensionsLeaveOneWaiting(t *testing.T) {
	svc, _, _, _ := schedService(t, qm.Started{State: qm.Active, Node: "gpu01"})
	ctx := context.Background()
	l := mustRequest(t, svc, "alice@acme.example", 1, "interactive")
	const n = 4
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			_, err := svc.Extend(ctx, "alice@acme.example", l.ID, 7*time.Hour)
			errs <- err
		}()
	}
	refused := 0
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			if qm.ErrorCode(err) != qm.ECONFLICT || !strings.Contains(qm.ErrorMessage(err), "An extension of "+l.ID.String()+" (") || !strings.Contains(qm.ErrorMessage(err), "is already waiting for approval by dana@acme.example") {
				t.Errorf("a concurrent extension failed otherwise: %v", err)
			}
			refused++
		}
	}
	waiting, err := svc.List(ctx, qm.LeaseFilter{Kind: qm.KindExtension, Parent: l.ID, States: []qm.State{qm.PendingApproval}})
	if err != nil {
		t.Fatal(err)
	}
	if len(waiting) != 1 || refused != n-1 {
		t.Errorf("%d concurrent extensions left %d waiting and %d refused; want 1 and %d", n, len(waiting), refused, n-1)
	}
}
