package qm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// A reservation takes its node whole, in every class whose partition the node is in. Where the
// classes count the same GPUs, the scheduler subtracts the service's own job on both sides of the
// node and reports none of them used by others: the other class must still not see the node as
// free, and a lease of it waits instead of being placed on GPUs the reservation holds.
func TestAReservationKeepsAnotherClassOffItsNode(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := sharedNodeService(t, false)
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "sora@sakura.example", GPUs: 1, Class: "a100-big", Duration: 2 * time.Hour, Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Lease.State == qm.PendingApproval {
		if out, err = svc.Decide(ctx, "yuki@sakura.example", out.Lease.ID, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	res := mustGet(t, svc, out.Lease.ID)
	if res.State != qm.Active || res.Node != "dgx1" {
		t.Fatalf("the reservation is %s on %q; the test needs it running on dgx1", res.State, res.Node)
	}
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	nb := mustRequest(t, svc, "haru@sakura.example", 1, "jupyter")
	if nb.State != qm.Queued || nb.Node == "dgx1" {
		t.Errorf("dgx1 is reserved whole by %s, yet a jupyter lease is %s on %q; want it queued", res.ID, nb.State, nb.Node)
	}
}

// The lease of the other class that waits for a reservation's node is told it waits until the
// reservation's known end, not that no wait is expected.
func TestALeaseWaitingForAnotherClassesReservationIsToldItsEnd(t *testing.T) {
	for _, model := range []bool{false, true} {
		t.Run(fmt.Sprintf("predictor=%v", model), func(t *testing.T) {
			ctx := context.Background()
			svc, _, _ := sharedNodeService(t, model)
			out, err := svc.Request(ctx, qm.LeaseRequest{User: "sora@sakura.example", GPUs: 1, Class: "a100-big", Duration: 2 * time.Hour, Exclusive: true})
			if err != nil {
				t.Fatal(err)
			}
			if out.Lease.State == qm.PendingApproval {
				if out, err = svc.Decide(ctx, "yuki@sakura.example", out.Lease.ID, true, ""); err != nil {
					t.Fatal(err)
				}
			}
			res := mustGet(t, svc, out.Lease.ID)
			if res.State != qm.Active {
				t.Fatalf("the reservation is %s; the test needs it running", res.State)
			}
			nb := mustRequest(t, svc, "haru@sakura.example", 1, "jupyter")
			if nb.State != qm.Queued {
				t.Fatalf("the jupyter lease is %s; the test needs it queued behind the reservation", nb.State)
			}
			w, err := svc.LeaseWait(ctx, nb)
			if err != nil {
				t.Fatal(err)
			}
			if left := res.ExpiresAt.Sub(svc.Clock.Now()); w.Unknown || w.Median <= 0 || w.Median > left {
				t.Errorf("the jupyter lease waits for %s's node until %s (%v from now), yet its wait is %+v", res.ID, res.ExpiresAt, left, w)
			}
		})
	}
}
