package kube_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8stesting "k8s.io/client-go/testing"

	"github.com/acme/quartermaster/internal/qm"
)

// TestALeaseWhoseJobTheAPIDoesNotTakeNowWaits: the API server does not answer the create of a
// lease's Job (rate-limited, failing itself, timing out, not listening) even after client-go's own
// retries. Nothing was refused: the lease waits in the service's queue, saying that the cluster's
// API did not answer, unbilled, with nothing of it left on the cluster (its Service, made before
// the Job, is deleted), and is started once the API answers. A refusal (403, 422, 400) still fails
// the lease at once, unbilled, with the server's words.
func TestALeaseWhoseJobTheAPIDoesNotTakeNowWaits(t *testing.T) {
	ctx := context.Background()
	jobs := schema.GroupResource{Group: "batch", Resource: "jobs"}
	refused := &url.Error{Op: "Post", URL: "https://10.96.0.1:443/apis/batch/v1/namespaces/qm-fjord/jobs",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &osSyscallError{syscall.ECONNREFUSED}}}
	for _, c := range []struct {
		name  string
		err   error
		fails string // what a failed lease's reason says; "" when the lease waits
	}{
		{"too many requests", apierrors.NewTooManyRequests("the server has received too many requests and has asked us to try again later", 1), ""},
		{"internal error", apierrors.NewInternalError(errors.New("etcdserver: leader changed")), ""},
		{"unavailable", apierrors.NewServiceUnavailable("the server is currently unable to handle the request"), ""},
		{"server timeout", apierrors.NewServerTimeout(jobs, "create", 2), ""},
		{"client timeout", &url.Error{Op: "Post", URL: "https://10.96.0.1:443/apis/batch/v1", Err: context.DeadlineExceeded}, ""},
		{"connection refused", refused, ""},
		{"forbidden", apierrors.NewForbidden(jobs, "qm-l-1-jupyterlab", errors.New("jobs may not run in qm-fjord on Sundays")), "jobs may not run in qm-fjord on Sundays"},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "qm-l-1-jupyterlab",
			field.ErrorList{field.Invalid(field.NewPath("spec", "template", "spec", "priorityClassName"), "fjord-high", "no such priority class")}), "no such priority class"},
		{"bad request", apierrors.NewBadRequest("the Job's manifest names an unknown field spec.flavour"), "unknown field spec.flavour"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newKaskade(t)
			k.reconcile()
			away := true
			k.cs.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
				if away {
					return true, nil, c.err
				}
				return false, nil, nil
			})
			out, err := k.svc.Request(ctx, qm.LeaseRequest{User: "erik@kaskade.example", GPUs: 1, Class: "notebook", Duration: 4 * time.Hour, Template: "jupyterlab"})
			var l *qm.Lease
			if out != nil {
				l = out.Lease
			}
			if c.fails != "" {
				if l == nil {
					l = k.lease(1)
				} else {
					l = k.lease(l.ID)
				}
				if l.State != qm.Failed || !strings.Contains(l.Reason, c.fails) || !l.StartedAt.IsZero() {
					t.Errorf("lease %s %q from %v, want failed at once, unbilled, with the server's words", l.State, l.Reason, l.StartedAt)
				}
				if err == nil || !strings.Contains(qm.ErrorMessage(err), c.fails) {
					t.Errorf("the reply %v does not say %q", err, c.fails)
				}
				k.noneLeft(ctx)
				return
			}
			if err != nil {
				t.Fatalf("the reply to a request the API did not answer: %v", err)
			}
			got := k.lease(l.ID)
			if got.State != qm.Queued || !strings.Contains(got.Reason, "Kubernetes API server did not answer") {
				t.Errorf("lease %s %q, want queued saying the cluster's API did not answer", got.State, got.Reason)
			}
			if !got.StartedAt.IsZero() {
				t.Errorf("billed from %s", got.StartedAt)
			}
			k.noneLeft(ctx)
			// Still not answering: it keeps waiting.
			k.clock.Advance(time.Minute)
			k.pass()
			if got := k.lease(l.ID); got.State != qm.Queued {
				t.Errorf("lease %s %q while the API still does not answer", got.State, got.Reason)
			}
			k.noneLeft(ctx)
			// The API answers: the lease's Job is made, and it runs.
			away = false
			k.clock.Advance(time.Minute)
			k.pass()
			got = k.lease(l.ID)
			if got.Ref != "job/qm-fjord/qm-l-1-jupyterlab" || got.State.Ended() {
				t.Fatalf("lease %s %q %q once the API answers", got.State, got.Reason, got.Ref)
			}
			k.runPod("qm-fjord", "qm-l-1-jupyterlab", "mig-01", k.clock.Now())
			k.pass()
			if got := k.lease(l.ID); got.State != qm.Active {
				t.Errorf("lease %s %q once its pod runs", got.State, got.Reason)
			}
		})
	}
}

// osSyscallError is the error a refused dial carries, as os.SyscallError wraps it.
type osSyscallError struct{ errno syscall.Errno }

func (e *osSyscallError) Error() string { return "connect: " + e.errno.Error() }
func (e *osSyscallError) Unwrap() error { return e.errno }

// noneLeft fails the test where the team's namespace holds a Job or Service.
func (k *kaskade) noneLeft(ctx context.Context) {
	k.t.Helper()
	svcs, err := k.cs.CoreV1().Services("qm-fjord").List(ctx, metav1.ListOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	for _, s := range svcs.Items {
		k.t.Errorf("Service %s left of a lease whose Job was not made", s.Name)
	}
	for _, j := range k.jobs("qm-fjord") {
		k.t.Errorf("Job %s left", j.Name)
	}
}
