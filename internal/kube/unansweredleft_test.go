package kube_test

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/acme/quartermaster/internal/qm"
)

// TestWhatAnUnansweredStartLeftGoesWithItsLease: the API server stops answering in the middle of
// a lease's start, and the deletes of what the start had made go unanswered too, so its Service
// (and its Job, where the create was taken but its answer lost) stay behind while the lease waits
// in the queue. Once the lease ends without starting (cancelled while it waits), the reconcile
// pass deletes them when the API answers again: nothing of it is left on the cluster.
func TestWhatAnUnansweredStartLeftGoesWithItsLease(t *testing.T) {
	for _, c := range []struct {
		name    string
		jobMade bool // the API took the Job's create, and its answer was lost
	}{
		{"service left", false},
		{"service and job left", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			k := newKaskade(t)
			k.reconcile()
			away := true
			down := apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
			k.cs.PrependReactor("create", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if !away {
					return false, nil, nil
				}
				if c.jobMade {
					o := a.(k8stesting.CreateAction).GetObject()
					if err := k.cs.Tracker().Create(a.GetResource(), o, a.GetNamespace()); err != nil {
						t.Fatal(err)
					}
				}
				return true, nil, down
			})
			for _, verb := range []string{"delete", "list"} {
				k.cs.PrependReactor(verb, "*", func(k8stesting.Action) (bool, runtime.Object, error) {
					if away {
						return true, nil, down
					}
					return false, nil, nil
				})
			}
			out, err := k.svc.Request(ctx, qm.LeaseRequest{User: "erik@kaskade.example", GPUs: 1, Class: "notebook", Duration: 4 * time.Hour, Template: "jupyterlab"})
			if err != nil {
				t.Fatal(err)
			}
			id := out.Lease.ID
			if got := k.lease(id); got.State != qm.Queued {
				t.Fatalf("lease %s %q, want queued while the API does not answer", got.State, got.Reason)
			}
			away = false // the test looks, not the service
			left := len(k.services("qm-fjord"))
			away = true
			if left == 0 {
				t.Fatal("the test's API deleted the Service of the unanswered start; it should have stayed behind")
			}
			if _, err := k.svc.Cancel(ctx, "erik@kaskade.example", id); err != nil {
				t.Fatal(err)
			}
			if got := k.lease(id); got.State != qm.Cancelled {
				t.Fatalf("lease %s %q after its cancel", got.State, got.Reason)
			}
			away = false
			for range 2 {
				k.clock.Advance(time.Minute)
				k.pass()
			}
			if got := k.lease(id); got.State != qm.Cancelled {
				t.Errorf("lease %s %q, want still cancelled", got.State, got.Reason)
			}
			k.noneLeft(ctx)
		})
	}
}
