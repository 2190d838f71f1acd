package kube_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/acme/quartermaster/internal/qm"
)

// TestCreateRefusalReason: when the API server refuses a lease's objects (a ResourceQuota, an
// admission policy), Start's error carries the server's message as the user should read it
// (qm.Refused); an error that is not the server's answer is no refusal.
func TestCreateRefusalReason(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		err    error
		refuse bool
	}{
		{"quota", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "qm-l-1-sleeper", errors.New("exceeded quota: gpu, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4")), true},
		{"unreachable", errors.New("dial tcp 10.0.0.1:6443: connect: connection refused"), false},
		{"server error", apierrors.NewInternalError(errors.New("etcd is down")), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := fake.NewClientset(pvc("qm-vision", "team-storage"))
			refuse := func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, c.err }
			cs.PrependReactor("create", "pods", refuse)
			cs.PrependReactor("create", "jobs", refuse)
			b := backendWith(t, examplePolicy(t), cs, catalogEdited(t))
			_, err := b.Start(ctx, &qm.Lease{ID: 1, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, Duration: time.Hour})
			if err == nil {
				t.Fatal("started")
			}
			var refused *qm.Refused
			if got := errors.As(err, &refused); got != c.refuse {
				t.Fatalf("%v: refusal %v, want %v", err, got, c.refuse)
			}
			if c.refuse && !strings.Contains(refused.Reason, "exceeded quota: gpu") {
				t.Errorf("reason %q", refused.Reason)
			}
		})
	}
}
