package qm_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// The same request that waits for a budget owner, asked several times at once by its requester
// (each delivery its own key: typed again, not redelivered), waits once: one request is made and
// every other answer names it. A quota increase the same. On SQLite and PostgreSQL alike.
func TestTheSameWaitingRequestAskedAtOnceIsMadeOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		p := manyTeamsPolicy(t, 2, "")
		st := storetest.Open(t, url)
		svc := newService(t, p, st)
		ctx := context.Background()
		const n = 8
		outs := make([]*qm.Outcome, 2*n)
		errs := make([]error, 2*n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(2)
			go func(i int) { // past the team's quota of 3: over-quota sends it to boss00
				defer wg.Done()
				outs[i], errs[i] = svc.Request(ctx, qm.LeaseRequest{User: "u00@x.example", GPUs: 4, Class: "interactive",
					Duration: 2 * time.Hour, RequestKey: fmt.Sprintf("typed-%d", i)})
			}(i)
			go func(i int) {
				defer wg.Done()
				outs[n+i], errs[n+i] = svc.QuotaIncrease(qm.WithDeliveryKey(ctx, fmt.Sprintf("quota-%d", i)), "u00@x.example", "", "train", 2, 0, "a deadline")
			}(i)
		}
		wg.Wait()
		for k, part := range [][]*qm.Outcome{outs[:n], outs[n:]} {
			var made, before int
			var first qm.LeaseID
			for i, o := range part {
				if errs[k*n+i] != nil {
					t.Fatalf("request %d: %v", k*n+i, errs[k*n+i])
				}
				if o.Lease.State != qm.PendingApproval {
					t.Fatalf("request %d is %s, want it to wait", k*n+i, o.Lease.State)
				}
				if o.AskedBefore {
					before++
				} else {
					made++
					first = o.Lease.ID
				}
			}
			if made != 1 || before != n-1 {
				t.Fatalf("%d made and %d answered with one made before; want 1 and %d", made, before, n-1)
			}
			for i, o := range part {
				if o.Lease.ID != first || len(o.Approvers) == 0 {
					t.Errorf("request %d answered with %s (deciders %v); want %s and who decides it", k*n+i, o.Lease.ID, o.Approvers, first)
				}
			}
		}
		all, err := svc.List(ctx, qm.LeaseFilter{Kind: qm.AnyKind})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 2 {
			t.Errorf("%d requests made, want 2", len(all))
		}
		// Different in anything, it is another request.
		for _, o := range []func() (*qm.Outcome, error){
			func() (*qm.Outcome, error) {
				return svc.Request(ctx, qm.LeaseRequest{User: "u00@x.example", GPUs: 4, Class: "interactive", Duration: 3 * time.Hour})
			},
			func() (*qm.Outcome, error) {
				return svc.Request(ctx, qm.LeaseRequest{User: "u00@x.example", GPUs: 4, Class: "interactive", Duration: 2 * time.Hour, DataClass: "secret"})
			},
			func() (*qm.Outcome, error) {
				return svc.QuotaIncrease(ctx, "u00@x.example", "", "train", 2, 0, "another deadline")
			},
			func() (*qm.Outcome, error) {
				return svc.QuotaIncrease(ctx, "u00@x.example", "", "train", 2, 48*time.Hour, "a deadline")
			},
		} {
			out, err := o()
			if err != nil || out.AskedBefore {
				t.Errorf("a different request: %v, asked before %v; want a new one", err, out != nil && out.AskedBefore)
			}
		}
	})
}
