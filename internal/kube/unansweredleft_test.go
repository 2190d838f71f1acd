package kube_test

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/acme/quartermaster/internal/qm"
)

// TestWhatAnUnansweredStartLeftGoesWithItsLease: the API server stops answering in the middle of
// a lease's start, and the deletes of what the start had made go unanswered too, so its Service
// (and its Job, where the create was taken but its answer lost) stay behind while the lease waits
// in the queue. Once the lease ends without starting (cancelled while it waits, or its next try
// refused), nothing of it is left on the cluster once the API answers again.
func TestWhatAnUnansweredStartLeftGoesWithItsLease(t *testing.T) {
	for _, c := range []struct {
		name    string
		jobMade bool // the API took the Job's create, and its answer was lost
		refused bool // the next try's create of the Job is refused (403), not cancelled
	}{
		{"service left, cancelled", false, false},
		{"service and job left, cancelled", true, false},
		{"service left, refused", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			k := newKaskade(t)
			k.reconcile()
			away := true
			down := apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
			k.cs.PrependReactor("create", "jobs", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if !away && c.refused {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "qm-l-1-jupyterlab",
						errors.New("jobs may not run in qm-fjord after hours"))
				}
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
			want := qm.Failed
			if !c.refused {
				want = qm.Cancelled
				if _, err := k.svc.Cancel(ctx, "erik@kaskade.example", id); err != nil {
					t.Fatal(err)
				}
				if got := k.lease(id); got.State != want {
					t.Fatalf("lease %s %q after its cancel", got.State, got.Reason)
				}
			}
			away = false
			for range 2 {
				k.clock.Advance(time.Minute)
				k.pass()
			}
			if got := k.lease(id); got.State != want {
				t.Errorf("lease %s %q, want %s", got.State, got.Reason, want)
			}
			k.noneLeft(ctx)
		})
	}
}
