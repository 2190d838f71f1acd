package qm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/waits"
)

// A lease the scheduler holds in its queue while the service sees GPUs free (the scheduler knows
// something the service does not) is not told that it waits for nothing: the wait is the
// scheduler's to say, in the queued reply and whenever it is asked again.
func TestALeaseTheSchedulerQueuesIsNotPromisedNoWait(t *testing.T) {
	for _, model := range []bool{false, true} {
		t.Run(fmt.Sprintf("predictor=%v", model), func(t *testing.T) {
			svc, f, _, _ := schedService(t, qm.Started{State: qm.Queued, Reason: "Slurm: Resources"})
			if model {
				svc.Waits = waits.New()
			}
			f.nodes = exampleNodes()
			ctx := context.Background()
			if _, err := svc.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			out, err := svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 1, Class: "interactive", Duration: 2 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if out.Lease.State != qm.Queued {
				t.Fatalf("the scheduler queued it, yet the lease is %s", out.Lease.State)
			}
			again, err := svc.LeaseWait(ctx, out.Lease)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []qm.WaitEstimate{out.Wait, again} {
				if !w.Unknown && w.Median < time.Minute {
					t.Errorf("queued by the scheduler, yet told a wait of %v (90%%: %v)", w.Median, w.P90)
				}
			}
		})
	}
}
