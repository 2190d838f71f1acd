package kube_test

import (
	"context"
	"github.com/acme/quartermaster/internal/kube"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/acme/quartermaster/internal/qm"
)

// TestALeaseWhoseNodeGoesBeforeItsPodStartsIsPlacedAgain: the service placed a lease on a node
// it found free and pinned its Job there, and before its pod was placed an operator cordoned the
// node (maintenance) or it left the cluster (scaled in, broken). The pod can never be placed
// there: rather than wait, unbilled, until its Job's deadline and expire having never run, the
// lease's Job is deleted and the lease placed again, on a node that takes it, where it runs.
func TestALeaseWhoseNodeGoesBeforeItsPodStartsIsPlacedAgain(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		gone func(k *kaskade, node string)
		says string
	}{
		{"cordoned", func(k *kaskade, node string) { k.setNode(node, cordon) }, "cordoned"},
		{"deleted", func(k *kaskade, node string) {
			if err := k.cs.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}); err != nil {
				k.t.Fatal(err)
			}
		}, "no longer in the cluster"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newKaskade(t)
			if _, err := k.cs.CoreV1().Nodes().Create(ctx, kaskadeNode("mig-02", "mig", "nvidia.com/mig-3g.40gb", 2), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			k.reconcile()
			l := k.ask("erik@kaskade.example", 1, "notebook", "jupyterlab", 4*time.Hour)
			const ns, job = "qm-fjord", "qm-l-1-jupyterlab"
			first := kube.PinnedNodes(k.job(ns, job).Spec.Template.Spec)
			if len(first) != 1 || first[0] != l.Node {
				t.Fatalf("lease on %q, its Job pinned to %v", l.Node, first)
			}
			other := "mig-02"
			if l.Node == other {
				other = "mig-01"
			}
			// The Job controller made its pod; the scheduler has not placed it yet.
			k.addJobPod(ns, job, corev1.PodPending, "")
			k.setPod(ns, job+"-x1", unschedulable)
			k.pass()
			if got := k.lease(l.ID); got.State != qm.Queued {
				t.Fatalf("lease %s %q while its pod waits", got.State, got.Reason)
			}

			c.gone(k, l.Node)
			k.clock.Advance(time.Minute)
			k.pass()
			got := k.lease(l.ID)
			if got.State.Ended() || !got.StartedAt.IsZero() {
				t.Fatalf("lease %s %q from %v, want it placed again, unbilled", got.State, got.Reason, got.StartedAt)
			}
			if got.Node != other {
				t.Errorf("lease %s %q on %q, want placed again on %s", got.State, got.Reason, got.Node, other)
			}
			jobs := k.jobs(ns)
			if len(jobs) != 1 {
				t.Fatalf("%d Jobs, want the lease's one", len(jobs))
			}
			if pins := kube.PinnedNodes(jobs[0].Spec.Template.Spec); len(pins) != 1 || pins[0] != other {
				t.Errorf("the lease's Job is pinned to %v, want %s", pins, other)
			}
			pods, err := k.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pods.Items {
				t.Errorf("pod %s of the Job pinned to the node that went is left", p.Name)
			}
			evs, err := k.svc.History(ctx, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			said := false
			for _, e := range evs {
				said = said || (strings.Contains(e.Reason, c.says) && strings.Contains(e.Reason, l.Node))
			}
			if !said {
				t.Errorf("the lease's history does not say that %s is %s: %+v", l.Node, c.says, evs)
			}

			k.runPod(ns, job, other, k.clock.Now())
			k.pass()
			if got := k.lease(l.ID); got.State != qm.Active || got.Node != other {
				t.Errorf("lease %s %q on %q once its pod runs on %s", got.State, got.Reason, got.Node, other)
			}
		})
	}
}
