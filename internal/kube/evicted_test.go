package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/acme/quartermaster/internal/qm"
)

// TestADrainedNodesLeaseSaysItWasEvicted: kubectl drain evicts a running workspace's pod, which
// Kubernetes deletes once it stopped; its Job then fails, counting the pod it no longer shows. A
// pass that saw the pod being evicted keeps why (in the Job, so a restart of the service in
// between keeps it too): its owner reads that the pod was evicted, not only that it is gone.
func TestADrainedNodesLeaseSaysItWasEvicted(t *testing.T) {
	ctx := context.Background()
	k := newKaskade(t)
	k.reconcile()
	l := k.ask("erik@kaskade.example", 4, "tung", "cuda-smoke", 3*time.Hour)
	k.runPod("qm-fjord", "qm-l-1-cuda-smoke", "h100-01", k.clock.Now())
	k.reconcile()
	k.clock.Advance(30 * time.Minute)
	now := metav1.Time{Time: k.clock.Now()}
	k.setPod("qm-fjord", "qm-l-1-cuda-smoke-x1", func(p *corev1.Pod) {
		p.DeletionTimestamp = &now
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
			Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: now})
	})
	k.reconcile()
	if got := k.lease(l.ID); got.State != qm.Active {
		t.Fatalf("while its pod stops: %s %q", got.State, got.Reason)
	}
	k.svc = k.service() // the service restarts meanwhile
	if err := k.cs.CoreV1().Pods("qm-fjord").Delete(ctx, "qm-l-1-cuda-smoke-x1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k.setJob("qm-fjord", "qm-l-1-cuda-smoke", func(j *batchv1.Job) {
		j.Status.Active, j.Status.Failed = 0, 1
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded",
			LastTransitionTime: metav1.Time{Time: now.Add(30 * time.Second)}}}
	})
	k.clock.Advance(time.Minute)
	k.reconcile()
	got := k.lease(l.ID)
	if got.State != qm.Failed || !strings.Contains(got.Reason, "EvictionByEvictionAPI: Eviction API: evicting") || strings.Contains(got.Reason, "is gone") {
		t.Errorf("after the drain: %s %q; want failed saying its pod was evicted", got.State, got.Reason)
	}
	if n := k.notes.Of(qm.NoticeFailed, l.ID); len(n) != 1 || !strings.Contains(n[0].Lease.Reason, "EvictionByEvictionAPI") {
		t.Errorf("owner told %v", k.notes.Kinds(l.ID))
	}
}
