package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/acme/quartermaster/internal/qm"
)

// TestAnExclusiveWaitSaysWhatKeepsItWaitingNow: a request of an exclusive class that first
// waits behind another team's lease reads so; once that lease is gone and its own team's leases
// fill the class's nodes, a pass says it waits for free GPUs, not for nodes no other team uses.
func TestAnExclusiveWaitSaysWhatKeepsItWaitingNow(t *testing.T) {
	ctx := context.Background()
	k := newKaskade(t)
	if _, err := k.cs.CoreV1().PersistentVolumeClaims("qm-skog-lab-d87affb1").Create(ctx, pvc("qm-skog-lab-d87affb1", "skog-vol"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	k.reconcile()
	other := k.ask("sara@kaskade.example", 2, "tung", "cuda-smoke", 3*time.Hour)
	first := k.ask("erik@kaskade.example", 6, "tung", "cuda-smoke", time.Hour)
	second := k.ask("astrid@kaskade.example", 4, "tung", "cuda-smoke", time.Hour)
	for _, l := range []*qm.Lease{first, second} {
		if l.State != qm.Queued || !strings.Contains(l.Reason, "no other team uses") {
			t.Fatalf("%s behind another team's lease: %s %q", l.ID, l.State, l.Reason)
		}
	}
	if _, err := k.svc.Release(ctx, "sara@kaskade.example", other.ID); err != nil {
		t.Fatal(err)
	}
	k.pass()
	k.pass()
	if got := k.lease(first.ID); got.State != qm.Provisioning {
		t.Fatalf("first after the other team's lease ended: %s %q", got.State, got.Reason)
	}
	got := k.lease(second.ID)
	t.Logf("second: %s %q", got.State, got.Reason)
	if got.State != qm.Queued || strings.Contains(got.Reason, "other team") || !strings.Contains(got.Reason, "free GPUs") {
		t.Errorf("second, behind its own team's lease: %s %q", got.State, got.Reason)
	}
}
