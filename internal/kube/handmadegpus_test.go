package kube_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/acme/quartermaster/internal/qm"
)

// holding gives a pod's main container a limit of n of a GPU resource.
func holding(res string, n int64) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		if len(p.Spec.Containers) == 0 {
			p.Spec.Containers = []corev1.Container{{Name: "main", Image: "busybox"}}
		}
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceName(res): *resource.NewQuantity(n, resource.DecimalSI)}
	}
}

// TestAHandMadePodWithALeasesLabelsHoldsItsGPUs: a pod someone made by hand with a running
// lease's labels (copied from its Job) holds a MIG slice of the lease's node as any pod does, and
// the kubelet counts it: the node is full, and a request for a slice there waits in the service's
// queue rather than be pinned to a node its pod cannot fit on. The lease's own pod, which the
// service counts as the lease's, is not counted twice: once the hand-made pod is gone the request
// starts on that node.
func TestAHandMadePodWithALeasesLabelsHoldsItsGPUs(t *testing.T) {
	ctx := context.Background()
	const res = "nvidia.com/mig-3g.40gb"
	k := newKaskade(t)
	k.reconcile()
	k.ask("erik@kaskade.example", 1, "notebook", "jupyterlab", 4*time.Hour)
	const ns, job = "qm-fjord", "qm-l-1-jupyterlab"
	k.runPod(ns, job, "mig-01", k.clock.Now())
	k.setPod(ns, job+"-x1", holding(res, 1))
	labels := map[string]string{}
	for key, v := range k.job(ns, job).Spec.Template.Labels {
		labels[key] = v
	}
	k.handMade(ns, "debug-copy", "mig-01", labels)
	k.setPod(ns, "debug-copy", holding(res, 1))
	k.pass()

	l := k.ask("astrid@kaskade.example", 1, "notebook", "", 2*time.Hour)
	if got := k.lease(l.ID); got.State != qm.Queued || got.Ref != "" {
		t.Errorf("lease %s %q %q: placed on a node whose slices two pods hold", got.State, got.Reason, got.Ref)
	}

	if err := k.cs.CoreV1().Pods(ns).Delete(ctx, "debug-copy", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k.clock.Advance(time.Minute)
	k.pass()
	if got := k.lease(l.ID); got.Ref == "" || got.State.Ended() {
		t.Errorf("lease %s %q: not started on mig-01 once a slice is free", got.State, got.Reason)
	}
}
