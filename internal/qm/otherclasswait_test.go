package qm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/waits"
)

// A node in two classes' partitions, whose GPUs an exclusive lease of one class holds: the
// scheduler reports them used on the other class's side of the node, where they are no
// job outside the service but that lease, whose end is known. A request of the other class
// is told it waits until then, with or without the wait predictor, not that there is no
// estimate.
func TestAnotherClassesExclusiveLeaseEndsTheWait(t *testing.T) {
	for _, model := range []bool{false, true} {
		t.Run(fmt.Sprintf("predictor=%v", model), func(t *testing.T) {
			ctx := context.Background()
			svc, f, clock := sharedNodeService(t, model)
			big := mustRequest(t, svc, "sora@sakura.example", 1, "a100-big")
			if big.State != qm.Active || big.Node != "dgx1" {
				t.Fatalf("the a100-big lease is %s on %q; the test needs it running on dgx1", big.State, big.Node)
			}
			// Slurm gives the exclusive job every GPU of dgx1: the jupyter side of it reports
			// them used.
			f.nodes[1].Used = 4
			clock.Advance(30 * time.Minute)
			if _, err := svc.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			left := big.ExpiresAt.Sub(clock.Now())
			w, err := svc.PredictWait(ctx, "jupyter", "proteomics", 1)
			if err != nil {
				t.Fatal(err)
			}
			if w.Unknown || w.Median <= 0 || w.Median > left || w.P90 < w.Median {
				t.Errorf("with dgx1 held by %s until %s (%v from now), a jupyter quote says %+v; want a wait of at most %v", big.ID, big.ExpiresAt, left, w, left)
			}
			l := mustRequest(t, svc, "haru@sakura.example", 1, "jupyter")
			if l.State != qm.Queued {
				t.Fatalf("dgx1 is held, yet the jupyter lease is %s", l.State)
			}
			lw, err := svc.LeaseWait(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			if lw.Unknown || lw.Median <= 0 || lw.Median > left {
				t.Errorf("the queued jupyter lease's wait is %+v; want one of at most %v", lw, left)
			}
		})
	}
}

// A request whose wait depends on where it can be placed (a class that is exclusive, or more GPUs
// than one), on a node in two classes' partitions whose GPUs a running lease of the other class
// holds: the scheduler reports them used on the request's side of the node, where they are that
// lease, whose end is known. The request is told it waits until then, not that there is no
// estimate.
func TestAnotherClassesLeaseEndsAPlacedRequestsWait(t *testing.T) {
	for _, model := range []bool{false, true} {
		t.Run(fmt.Sprintf("predictor=%v", model), func(t *testing.T) {
			ctx := context.Background()
			svc, f, clock := sharedNodeService(t, model)
			nb := mustRequest(t, svc, "haru@sakura.example", 1, "jupyter")
			if nb.State != qm.Active || nb.Node != "dgx1" {
				t.Fatalf("the jupyter lease is %s on %q; the test needs it running on dgx1", nb.State, nb.Node)
			}
			// The notebook's GPU is one of dgx1's, so the a100-big side of it reports it used.
			f.nodes[0].Used = 1
			clock.Advance(30 * time.Minute)
			if _, err := svc.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			left := nb.ExpiresAt.Sub(clock.Now())
			w, err := svc.PredictWait(ctx, "a100-big", "vision-lab", 4)
			if err != nil {
				t.Fatal(err)
			}
			if w.Unknown || w.Median <= 0 || w.Median > left || w.P90 < w.Median {
				t.Errorf("with one GPU of dgx1 held by %s until %s (%v from now), a quote for 4 a100-big GPUs says %+v; want a wait of at most %v", nb.ID, nb.ExpiresAt, left, w, left)
			}
			l := mustRequest(t, svc, "sora@sakura.example", 4, "a100-big")
			if l.State != qm.Queued {
				t.Fatalf("one GPU of dgx1 is held, yet the 4-GPU a100-big lease is %s", l.State)
			}
			lw, err := svc.LeaseWait(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			if lw.Unknown || lw.Median <= 0 || lw.Median > left {
				t.Errorf("the queued a100-big lease's wait is %+v; want one of at most %v", lw, left)
			}
		})
	}
}

// sharedNodeService is a service on tokyo.yaml whose scheduler reports dgx1, 4 GPUs, in the
// partitions of both a100-big and jupyter, with the wait predictor when model is set; its
// inventory is read.
func sharedNodeService(t *testing.T, model bool) (*qm.Service, *fakeScheduler, *sim.Clock) {
	t.Helper()
	svc, f, clock, _ := schedService(t, qm.Started{State: qm.Active})
	p, err := policy.LoadFile("../../commands/testdata/tokyo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	svc.Policy, svc.Directory = p, p
	if model {
		svc.Waits = waits.New()
	}
	f.nodes = []qm.Node{{Name: "dgx1", Class: "a100-big", GPUs: 4}, {Name: "dgx1", Class: "jupyter", GPUs: 4}}
	if _, err := svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc, f, clock
}
