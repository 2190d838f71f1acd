package kube_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/acme/quartermaster/internal/qm"
)

// TestCreateRefusalReason: when the API server refuses a lease's objects (a ResourceQuota, an
// admission policy), Start's error carries the server's message as the user should read it
// (qm.Refused); an error that is not the server's answer is no refusal. Either way the lease
// fails, and nothing of it is left behind: the Service made before the Job was refused is deleted.
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
			svcs, err := cs.CoreV1().Services("qm-vision").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range svcs.Items {
				t.Errorf("a lease whose Job was not made leaves its Service %s behind", s.Name)
			}
		})
	}
}

// TestALeaseWithoutItsClaimLeavesNothingMade: a team whose PersistentVolumeClaim is missing gets
// its lease refused in one sentence naming the claim and the namespace (and, where the namespace
// is missing too, saying so), and the refusal makes nothing on the cluster: no namespace, no
// Service, no Job. Once an admin made both, the same lease starts.
func TestALeaseWithoutItsClaimLeavesNothingMade(t *testing.T) {
	ctx := context.Background()
	p := examplePolicy(t)
	p.Teams[1].Storage.PVC = "language-data"
	cs := fake.NewClientset()
	b := newBackend(t, p, cs)
	l := &qm.Lease{ID: 4, User: "lee@acme.example", Team: "language", Class: "interactive", GPUs: 1, Duration: time.Hour}
	_, err := b.Start(ctx, l)
	var refused *qm.Refused
	if !errors.As(err, &refused) {
		t.Fatalf("start without the claim: %v, want a refusal", err)
	}
	for _, want := range []string{"PersistentVolumeClaim language-data", "no namespace qm-language", "cluster admin"} {
		if !strings.Contains(refused.Reason, want) {
			t.Errorf("reason %q does not say %q", refused.Reason, want)
		}
	}
	if strings.Count(strings.TrimSuffix(refused.Reason, "."), ". ") > 0 || strings.Contains(refused.Reason, "\n") {
		t.Errorf("reason %q is not one sentence", refused.Reason)
	}
	nss, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss.Items {
		t.Errorf("a refused lease left namespace %s behind", ns.Name)
	}
	for _, a := range cs.Actions() {
		if a.GetVerb() == "create" {
			t.Errorf("a refused lease created a %s", a.GetResource().Resource)
		}
	}

	// The namespace is there, the claim is not: the reason does not say the namespace is missing.
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "qm-language"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err = b.Start(ctx, l); !errors.As(err, &refused) || strings.Contains(refused.Reason, "no namespace") {
		t.Errorf("start without the claim in an existing namespace: %v", err)
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims("qm-language").Create(ctx, pvc("qm-language", "language-data"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Start(ctx, l); err != nil {
		t.Errorf("start once the claim is there: %v", err)
	}
}
