package kube_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
)

// oomKill plays the kubelet and the Job controller: the Job's running pod (made from the Job's
// own pod template, so with its limits) is killed for going over its memory limit, and the Job
// fails.
func (k *kaskade) oomKill(ns, job, node string) {
	k.t.Helper()
	k.runPod(ns, job, node, k.clock.Now())
	k.reconcile()
	k.clock.Advance(10 * time.Minute)
	spec := k.job(ns, job).Spec.Template.Spec
	k.setPod(ns, job+"-x1", func(p *corev1.Pod) {
		p.Spec = *spec.DeepCopy()
		p.Spec.NodeName = node
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "OOMKilled", StartedAt: p.Status.ContainerStatuses[0].State.Running.StartedAt, FinishedAt: metav1.Time{Time: k.clock.Now()}}}}}
	})
	k.setJob(ns, job, func(j *batchv1.Job) {
		j.Status.Active, j.Status.Failed = 0, 1
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: metav1.Time{Time: k.clock.Now()}}}
	})
	k.reconcile()
}

// TestAnOOMKilledWorkspaceSaysItRanOutOfMemory: a workspace killed at its memory limit fails
// saying, in plain words first, that it ran out of memory, what its limit was (its container's
// resources.limits.memory) and how to get more: more GPUs where its template gives memory per GPU
// and the template and class allow more, else that its template gives no more; Kubernetes's own
// words follow.
func TestAnOOMKilledWorkspaceSaysItRanOutOfMemory(t *testing.T) {
	k := newKaskade(t)
	k.reconcile()

	// cuda-smoke gives 8Gi per GPU, up to 8 GPUs; class tung allows 8.
	small := k.ask("erik@kaskade.example", 2, "tung", "cuda-smoke", 2*time.Hour)
	k.oomKill("qm-fjord", "qm-l-1-cuda-smoke", "h100-01")
	got := k.lease(small.ID)
	t.Logf("%s %q", got.State, got.Reason)
	words, detail, _ := strings.Cut(got.Reason, "exit code 137")
	if got.State != qm.Failed || !strings.Contains(words, "ran out of memory") || !strings.Contains(words, "16Gi") ||
		!strings.Contains(words, "8 GPUs") || !strings.Contains(words, "64Gi") || !strings.Contains(detail, "OOMKilled") {
		t.Errorf("OOMKilled with 2 of up to 8 GPUs: %s %q", got.State, got.Reason)
	}
	if n := k.notes.Of(qm.NoticeFailed, small.ID); len(n) == 0 || !strings.Contains(n[0].Lease.Reason, "ran out of memory") {
		t.Errorf("the owner was not told it ran out of memory: %+v", n)
	}

	// At the most the template and class give, asking for more GPUs gives no more memory.
	big := k.ask("erik@kaskade.example", 8, "tung", "cuda-smoke", 2*time.Hour)
	k.oomKill("qm-fjord", "qm-l-2-cuda-smoke", "h100-01")
	got = k.lease(big.ID)
	t.Logf("%s %q", got.State, got.Reason)
	words, _, _ = strings.Cut(got.Reason, "exit code 137")
	if got.State != qm.Failed || !strings.Contains(words, "ran out of memory") || !strings.Contains(words, "64Gi") ||
		strings.Contains(words, "ask for") || !strings.Contains(words, "cuda-smoke") {
		t.Errorf("OOMKilled at the most memory cuda-smoke gives: %s %q", got.State, got.Reason)
	}
}

// TestAMultiNodeOOMSaysTheLimitIsPerPod: a 16-GPU lease over two pods of 8 GPUs whose pod ran out
// of memory says its limit is per pod, how many pods share the lease, and that more GPUs make
// more pods, not more memory in each, so its owner does not ask for more GPUs to get more memory.
func TestAMultiNodeOOMSaysTheLimitIsPerPod(t *testing.T) {
	w := newWorld(t)
	clock := w.svc.Clock.(*sim.Clock)
	l, name := w.multiNode()
	pod := func(i int) string { return fmt.Sprintf("%s-%d-abcde", name, i) }
	w.setPod("qm-vision", pod(0), startedAt("gpu-b", clock.Now()))
	w.setPod("qm-vision", pod(1), startedAt("gpu-c", clock.Now()))
	w.reconcile()
	clock.Advance(20 * time.Minute)
	w.setPod("qm-vision", pod(1), func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "OOMKilled", StartedAt: metav1.Time{Time: clock.Now().Add(-time.Minute)}}}}}
	})
	w.reconcile()
	got := w.lease(l.ID)
	t.Logf("%s %q", got.State, got.Reason)
	words, _, _ := strings.Cut(got.Reason, "exit code 137")
	if got.State != qm.Failed || !strings.Contains(words, "512Gi per pod") || !strings.Contains(words, "2 pods") ||
		!strings.Contains(words, "8 GPUs each") || !strings.Contains(words, "not more memory") {
		t.Errorf("a 2-pod lease OOMKilled: %s %q, want its limit said per pod, of 2 pods of 8 GPUs each, and that more GPUs give no more memory per pod", got.State, got.Reason)
	}
}
