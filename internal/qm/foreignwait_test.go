package qm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/waits"
)

// GPUs that jobs outside the service hold are not free: a request that queues behind them is
// never told that no wait is expected, with or without the wait predictor, and a quote says the
// same as the queued reply. Their ends are the scheduler's to know: no estimate is made up.
func TestJobsOutsideTheServiceAreNotFreeToTheWait(t *testing.T) {
	for _, model := range []bool{false, true} {
		t.Run(fmt.Sprintf("predictor=%v", model), func(t *testing.T) {
			svc, f, _, _ := schedService(t, qm.Started{State: qm.Active})
			if model {
				svc.Waits = waits.New()
			}
			f.nodes = exampleNodes()
			for i := range f.nodes {
				if f.nodes[i].Class == "interactive" {
					f.nodes[i].Used = f.nodes[i].GPUs // every interactive GPU runs another job
				}
			}
			ctx := context.Background()
			if _, err := svc.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			out, err := svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 1, Class: "interactive", Duration: 2 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if out.Lease.State != qm.Queued {
				t.Fatalf("every interactive GPU is held, yet the lease is %s", out.Lease.State)
			}
			if w := out.Wait; !w.Unknown {
				t.Errorf("queued behind jobs outside the service, yet told a wait of %v (90%%: %v)", w.Median, w.P90)
			}
			q, err := svc.PredictWait(ctx, "interactive", "vision", 1)
			if err != nil {
				t.Fatal(err)
			}
			if !q.Unknown {
				t.Errorf("a quote with every interactive GPU held promises %v (90%%: %v)", q.Median, q.P90)
			}
		})
	}
}

// askLog keeps what the wait predictor was asked.
type askLog struct {
	qm.WaitPredictor
	reqs []qm.WaitRequest
}

func (a *askLog) Predict(now time.Time, req qm.WaitRequest, ahead []*qm.Lease, capacity int) qm.WaitEstimate {
	a.reqs = append(a.reqs, req)
	return a.WaitPredictor.Predict(now, req, ahead, capacity)
}

// memHistory keeps the wait predictor's outcomes in memory.
type memHistory struct{ classes []string }

func (h *memHistory) AddWaitRecord(_ context.Context, class string, _ time.Time, _ []byte) error {
	h.classes = append(h.classes, class)
	return nil
}

func (h *memHistory) WaitRecords(context.Context, time.Time, func(string, []byte) error) error {
	return nil
}

// A lease queued behind jobs outside the service is answered from what the scheduler says, not
// from the wait predictor; what it then waited still teaches the predictor, and is kept for the
// next start, as every other queued lease's wait is. The predictor's answer, which the requester
// was not told, is marked so (the weekly report keeps only what requesters were told).
func TestAWaitAnsweredWithoutThePredictorStillTeachesIt(t *testing.T) {
	svc, f, clock, _ := schedService(t, qm.Started{State: qm.Active})
	w, hist := waits.New(), &memHistory{}
	w.SetHistory(hist)
	asked := &askLog{WaitPredictor: w}
	svc.Waits = asked
	f.nodes = exampleNodes()
	for i := range f.nodes {
		if f.nodes[i].Class == "interactive" {
			f.nodes[i].Used = f.nodes[i].GPUs
		}
	}
	ctx := context.Background()
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	l := mustRequest(t, svc, "alice@acme.example", 1, "interactive")
	if l.State != qm.Queued {
		t.Fatalf("every interactive GPU is held, yet the lease is %s", l.State)
	}
	for _, r := range asked.reqs {
		if r.Lease == l.ID && !r.Unshown {
			t.Errorf("the predictor was asked about %s as if its answer were shown; the requester was told %v", l.ID, l.Reason)
		}
	}
	clock.Advance(20 * time.Minute)
	for i := range f.nodes {
		f.nodes[i].Used = 0
	}
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if err := svc.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, svc, l.ID); got.State != qm.Active {
		t.Fatalf("the outside jobs ended, yet %s is %s (%s)", l.ID, got.State, got.Reason)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(hist.classes) != 1 || hist.classes[0] != "interactive" {
		t.Fatalf("the predictor kept %v after the queued lease started; want its wait in interactive", hist.classes)
	}
}
