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
