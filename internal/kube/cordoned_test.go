package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/acme/quartermaster/internal/qm"
)

func (k *kaskade) setNode(name string, fn func(*corev1.Node)) {
	k.t.Helper()
	ctx := context.Background()
	n, err := k.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	fn(n)
	if _, err := k.cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		k.t.Fatal(err)
	}
}

func cordon(n *corev1.Node) {
	n.Spec.Unschedulable = true
	n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}
}

func uncordon(n *corev1.Node) { n.Spec.Unschedulable, n.Spec.Taints = false, nil }

func notReady(n *corev1.Node) {
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown"}}
	n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule}}
}

// TestARequestForACordonedClassWaitsSayingSo: when every node of a class is cordoned or not
// ready, a request waits in the service's queue, saying that the class's nodes are cordoned or
// not ready, not granted and handed to the Kubernetes scheduler to sit there Unschedulable; it
// gets its Job when a node is back, and is billed from when its pod runs.
func TestARequestForACordonedClassWaitsSayingSo(t *testing.T) {
	k := newKaskade(t)
	k.setNode("h100-01", cordon)
	k.setNode("mig-01", notReady)
	k.reconcile()

	l := k.ask("erik@kaskade.example", 4, "tung", "cuda-smoke", 2*time.Hour)
	t.Logf("tung: %s %q", l.State, l.Reason)
	if l.State != qm.Queued || !strings.Contains(l.Reason, "cordoned") || !strings.Contains(l.Reason, "h100-01") || l.Ref != "" {
		t.Errorf("every tung node cordoned: %s %q ref %q", l.State, l.Reason, l.Ref)
	}
	nb := k.ask("erik@kaskade.example", 1, "notebook", "jupyterlab", time.Hour)
	t.Logf("notebook: %s %q", nb.State, nb.Reason)
	if nb.State != qm.Queued || !strings.Contains(nb.Reason, "not ready") || !strings.Contains(nb.Reason, "mig-01") {
		t.Errorf("every notebook node not ready: %s %q", nb.State, nb.Reason)
	}
	if n := len(k.jobs("qm-fjord")); n != 0 {
		t.Errorf("%d Jobs made for requests no node can take", n)
	}
	k.clock.Advance(30 * time.Minute)
	k.pass()
	if got := k.lease(l.ID); got.State != qm.Queued || !got.StartedAt.IsZero() {
		t.Errorf("still cordoned: %s started %s", got.State, got.StartedAt)
	}

	k.setNode("h100-01", uncordon)
	k.pass()
	got := k.lease(l.ID)
	if got.State != qm.Provisioning || got.Ref == "" {
		t.Fatalf("after the uncordon: %s %q ref %q", got.State, got.Reason, got.Ref)
	}
	ran := k.clock.Now().Add(time.Minute)
	k.clock.Set(ran.Add(5 * time.Second))
	k.runPod("qm-fjord", "qm-l-1-cuda-smoke", "h100-01", ran)
	k.reconcile()
	if got = k.lease(l.ID); got.State != qm.Active || !got.StartedAt.Equal(ran) {
		t.Errorf("running: %s from %s, its pod from %s", got.State, got.StartedAt, ran)
	}
}
