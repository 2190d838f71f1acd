package qm_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// A job that reached its time limit while the service was down longer than the scheduler keeps
// ended jobs is gone from its list at the restart: its lease expired at its end, and is billed
// until then, not failed at the restart as if the job had vanished.
func TestAJobGoneAfterTheLeaseEndedExpiresTheLeaseAtItsEnd(t *testing.T) {
	svc, f, clock, notes := schedService(t, qm.Started{State: qm.Active, Connect: "ssh alice@" + qm.NodePlaceholder})
	ctx := context.Background()
	l := mustRequest(t, svc, "alice@acme.example", 1, "train")
	if l.State != qm.Active {
		t.Fatalf("lease %s is %s", l.ID, l.State)
	}
	end := mustGet(t, svc, l.ID).ExpiresAt
	clock.Set(end.Add(time.Hour)) // down over the end; the scheduler has forgotten the job
	f.Remove(l.Ref)
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, svc, l.ID)
	if got.State != qm.Expired || !got.EndedAt.Equal(end) {
		t.Fatalf("lease %s is %s (%q), ended %v; want expired at %v", l.ID, got.State, got.Reason, got.EndedAt, end)
	}
	if k := notes.Kinds(l.ID); len(k) != 1 || k[0] != qm.NoticeExpired {
		t.Errorf("notices %v, want one expiry notice", k)
	}
}
