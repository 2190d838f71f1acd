package kube_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/acme/quartermaster/internal/qm"
)

// TestAQueuedWorkspaceSaysItIsStarting: a workspace queued because no node had its GPUs, whose
// pod the scheduler then places (its image being pulled, its container made), is still queued
// until the pod runs, but its reason, which /gpu status shows, follows the pod: it says where the
// pod starts and what Kubernetes says of it, not that no node has the GPUs. No new message or
// history line comes with it.
func TestAQueuedWorkspaceSaysItIsStarting(t *testing.T) {
	w := newWorld(t)
	ws := w.request(1, "interactive", "jupyterlab")
	w.addJobPod("qm-vision", "qm-l-1-jupyterlab", corev1.PodPending, "")
	w.setPod("qm-vision", "qm-l-1-jupyterlab-x1", unschedulable)
	w.reconcile()
	if l := w.lease(ws.ID); l.State != qm.Queued || !strings.Contains(l.Reason, "Insufficient nvidia.com/gpu") {
		t.Fatalf("unschedulable: lease %s %q", l.State, l.Reason)
	}
	notices := len(w.notes.Kinds(ws.ID))

	w.setPod("qm-vision", "qm-l-1-jupyterlab-x1", func(p *corev1.Pod) {
		p.Spec.NodeName = "gpu-a"
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "registry.example/vision/jupyter:1",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
	})
	w.reconcile()
	l := w.lease(ws.ID)
	if l.State != qm.Queued {
		t.Fatalf("starting pod: lease %s %q, want still queued until it runs", l.State, l.Reason)
	}
	if strings.Contains(l.Reason, "Insufficient") || strings.Contains(l.Reason, "Unschedulable") {
		t.Errorf("starting pod on gpu-a: lease reason %q still says no node has the GPUs", l.Reason)
	}
	if !strings.Contains(l.Reason, "gpu-a") || !strings.Contains(l.Reason, "ContainerCreating") {
		t.Errorf("starting pod on gpu-a: lease reason %q, want where it starts and Kubernetes's word", l.Reason)
	}
	if k := w.notes.Kinds(ws.ID); len(k) != notices {
		t.Errorf("owner told %v on a new reason, want no new message", k)
	}

}
