package kube_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
)

// multiNode requests a 16-GPU pytorch-ddp lease on the world's two train nodes of 8 (a Job of
// two pods, one per node) and makes its two pods, neither scheduled yet. It returns the lease
// and the Job's name.
func (w *world) multiNode() (*qm.Lease, string) {
	w.t.Helper()
	ctx := context.Background()
	if c, _ := w.svc.Policy.Class("train"); c != nil {
		c.MaxGPUs = 16 // two whole nodes without an approval
	}
	out, err := w.svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 16, Class: "train", Duration: 2 * time.Hour,
		Template: "pytorch-ddp", Params: map[string]string{"nnodes": "2", "script": "train.py"}})
	if err != nil {
		w.t.Fatal(err)
	}
	l := out.Lease
	if l.Ref == "" {
		w.t.Fatalf("lease %s: %s %q", l.ID, l.State, l.Reason)
	}
	name := l.Ref[strings.LastIndexByte(l.Ref, '/')+1:]
	k, err := w.cs.BatchV1().Jobs("qm-vision").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	if k.Spec.Parallelism == nil || *k.Spec.Parallelism != 2 {
		w.t.Fatalf("a 2-node lease is a Job of %v pods", k.Spec.Parallelism)
	}
	for i := range 2 {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "qm-vision", Name: fmt.Sprintf("%s-%d-abcde", name, i), Labels: k.Spec.Template.Labels,
			UID: types.UID(fmt.Sprintf("uid-%d", i)), OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: name, APIVersion: "batch/v1"}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending}}
		if _, err := w.cs.CoreV1().Pods("qm-vision").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			w.t.Fatal(err)
		}
	}
	return l, name
}

// startedAt is running(node) with its main container started at t.
func startedAt(node string, t time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		running(node)(p)
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: t}}}}}
	}
}

// startingOn is a pod the scheduler bound to node whose image the kubelet is still pulling.
func startingOn(node string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = node
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
	}
}

// TestAMultiNodeLeaseIsActiveOnlyWhenAllItsPodsRun: Kubernetes binds a multi-node lease's pods one
// by one. As Slurm starts a multi-node job only once all its nodes are allocated, the lease is
// active (its owner told how to connect, its time and its cost counting) only when every pod
// runs: with one pod running and the other still pulling its image on its node it is not active,
// and with the other unschedulable it waits in the queue saying how many pods run and why the
// others wait; /gpu status shows the current count.
func TestAMultiNodeLeaseIsActiveOnlyWhenAllItsPodsRun(t *testing.T) {
	t.Run("one pod starting", func(t *testing.T) {
		w := newWorld(t)
		clock := w.svc.Clock.(*sim.Clock)
		l, name := w.multiNode()
		pod := func(i int) string { return fmt.Sprintf("%s-%d-abcde", name, i) }
		w.setPod("qm-vision", pod(0), startedAt("gpu-b", clock.Now()))
		w.setPod("qm-vision", pod(1), startingOn("gpu-c"))
		w.reconcile()
		if got := w.lease(l.ID); got.State == qm.Active || !got.StartedAt.IsZero() {
			t.Errorf("one pod running, the other pulling its image: lease %s since %v, want not active yet", got.State, got.StartedAt)
		}
		for _, k := range w.notes.Kinds(l.ID) {
			if k == qm.NoticeGranted {
				t.Errorf("the owner was told the lease runs while one of its pods does not: %v", w.notes.Kinds(l.ID))
			}
		}
		clock.Advance(10 * time.Minute)
		second := clock.Now().Add(-time.Minute)
		w.setPod("qm-vision", pod(1), startedAt("gpu-c", second))
		w.reconcile()
		got := w.lease(l.ID)
		if got.State != qm.Active || !got.StartedAt.Equal(second) || !got.ExpiresAt.Equal(second.Add(2*time.Hour)) || got.Node != "gpu-b,gpu-c" {
			t.Errorf("both pods running: lease %s since %v until %v on %q, want active since %v on gpu-b,gpu-c", got.State, got.StartedAt, got.ExpiresAt, got.Node, second)
		}
	})

	t.Run("one pod unschedulable", func(t *testing.T) {
		w := newWorld(t)
		clock := w.svc.Clock.(*sim.Clock)
		l, name := w.multiNode()
		pod := func(i int) string { return fmt.Sprintf("%s-%d-abcde", name, i) }
		w.setPod("qm-vision", pod(0), startedAt("gpu-b", clock.Now()))
		w.setPod("qm-vision", pod(1), unschedulable)
		w.reconcile()
		got := w.lease(l.ID)
		want := "1 of 2 pods running; waiting for 1 (Kubernetes: Unschedulable: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu.)"
		if got.State != qm.Queued || !strings.Contains(got.Reason, want) {
			t.Errorf("one pod running, the other unschedulable: lease %s %q, want queued saying %q", got.State, got.Reason, want)
		}

		// The scheduler binds the second pod; while it pulls its image the lease still waits,
		// and says so rather than repeating that the pod is unschedulable.
		clock.Advance(10 * time.Minute)
		w.setPod("qm-vision", pod(1), startingOn("gpu-c"))
		w.reconcile()
		got = w.lease(l.ID)
		if got.State != qm.Queued || !strings.Contains(got.Reason, "1 of 2 pods running; waiting for 1 (starting on gpu-c)") {
			t.Errorf("the second pod starting on gpu-c: lease %s %q, want queued saying it starts there", got.State, got.Reason)
		}

		clock.Advance(5 * time.Minute)
		second := clock.Now().Add(-time.Minute)
		w.setPod("qm-vision", pod(1), startedAt("gpu-c", second))
		w.reconcile()
		got = w.lease(l.ID)
		if got.State != qm.Active || !got.StartedAt.Equal(second) || got.Node != "gpu-b,gpu-c" {
			t.Errorf("both pods running: lease %s since %v on %q, want active since %v on gpu-b,gpu-c", got.State, got.StartedAt, got.Node, second)
		}
		if k := w.notes.Kinds(l.ID); len(k) != 2 || k[0] != qm.NoticeQueued || k[1] != qm.NoticeGranted {
			t.Errorf("owner told %v, want queued once, then granted", k)
		}
	})
}

// TestAMultiNodeLeaseThatLosesAPodFails: a distributed job that loses one of its ranks does not
// go on (the others wait for it until a timeout, or hang). When a pod of a running multi-node
// lease fails or is evicted, the lease fails at once with that pod's reason, before the Job
// controller has failed the Job, and its Job is deleted so that the pods left do not hold their
// GPUs; the failed pod's last log lines are kept for the owner's notice.
func TestAMultiNodeLeaseThatLosesAPodFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(*corev1.Pod)
		want string
	}{
		{"evicted", func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.Reason, p.Status.Message = "Evicted", "The node was low on resource: memory."
		}, "Kubernetes: Evicted: The node was low on resource: memory on gpu-c, one of its 2 pods"},
		{"exited", func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137, Reason: "OOMKilled", StartedAt: metav1.Time{Time: time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)}}}}}
		}, "exit code 137 (Kubernetes: OOMKilled)"},
		{"killed by a signal", func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Signal: 9, Reason: "Error", StartedAt: metav1.Time{Time: time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)}}}}}
		}, "killed by signal 9 (Kubernetes: Error)"},
		{"deleted with its node", func(p *corev1.Pod) {
			now := metav1.Now()
			p.DeletionTimestamp = &now
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"})
		}, "Kubernetes: DeletionByPodGC: PodGC: node no longer exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			clock := w.svc.Clock.(*sim.Clock)
			l, name := w.multiNode()
			pod := func(i int) string { return fmt.Sprintf("%s-%d-abcde", name, i) }
			w.setPod("qm-vision", pod(0), startedAt("gpu-b", clock.Now()))
			w.setPod("qm-vision", pod(1), startedAt("gpu-c", clock.Now()))
			w.reconcile()
			if got := w.lease(l.ID); got.State != qm.Active {
				t.Fatalf("both pods running: lease %s %q", got.State, got.Reason)
			}
			clock.Advance(20 * time.Minute)
			w.setPod("qm-vision", pod(1), tc.lose)
			w.reconcile()
			got := w.lease(l.ID)
			if got.State != qm.Failed || !strings.Contains(got.Reason, tc.want) || !strings.Contains(got.Reason, "gpu-c") {
				t.Errorf("a pod of a running 2-node lease lost: lease %s %q, want failed saying %q on gpu-c", got.State, got.Reason, tc.want)
			}
			if k := w.notes.Kinds(l.ID); len(k) == 0 || k[len(k)-1] != qm.NoticeFailed {
				t.Errorf("owner told %v, want failed last", k)
			}
			if _, err := w.cs.BatchV1().Jobs("qm-vision").Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("the Job of a lease that lost a pod is still there (%v): its other pod holds 8 GPUs", err)
			}
		})
	}
}

// TestAMultiNodeJobWhoseLeaderEndedIsNotFailed: a multi-node Job whose success policy ends it when
// its leader (index 0) finishes has the Job controller stop the other pods; while it does, before
// the Job is Complete, the pods it stops are no lost rank.
func TestAMultiNodeJobWhoseLeaderEndedIsNotFailed(t *testing.T) {
	w := newWorld(t)
	clock := w.svc.Clock.(*sim.Clock)
	l, name := w.multiNode()
	pod := func(i int) string { return fmt.Sprintf("%s-%d-abcde", name, i) }
	w.setPod("qm-vision", pod(0), startedAt("gpu-b", clock.Now()))
	w.setPod("qm-vision", pod(1), startedAt("gpu-c", clock.Now()))
	w.reconcile()
	w.setPod("qm-vision", pod(0), func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	w.setPod("qm-vision", pod(1), func(p *corev1.Pod) {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	})
	w.setJob("qm-vision", name, func(k *batchv1.Job) {
		k.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "SuccessPolicy"}}
	})
	w.reconcile()
	if got := w.lease(l.ID); got.State == qm.Failed {
		t.Errorf("a Job whose leader finished: lease failed %q", got.Reason)
	}
}

// TestAMultiNodeJobPastItsDeadlineExpires: a multi-node Job that reaches its
// activeDeadlineSeconds is marked FailureTarget (DeadlineExceeded) while its controller stops its
// pods, and Failed only once they are gone. The pods it stops are no lost rank: the lease expires,
// as a one-pod workspace's does, rather than failing.
func TestAMultiNodeJobPastItsDeadlineExpires(t *testing.T) {
	w := newWorld(t)
	clock := w.svc.Clock.(*sim.Clock)
	l, name := w.multiNode()
	pod := func(i int) string { return fmt.Sprintf("%s-%d-abcde", name, i) }
	w.setPod("qm-vision", pod(0), startedAt("gpu-b", clock.Now()))
	w.setPod("qm-vision", pod(1), startedAt("gpu-c", clock.Now()))
	w.reconcile()
	now := metav1.Now()
	for i := range 2 {
		w.setPod("qm-vision", pod(i), func(p *corev1.Pod) { p.DeletionTimestamp = &now })
	}
	w.setJob("qm-vision", name, func(k *batchv1.Job) {
		k.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded"}}
	})
	w.reconcile()
	if got := w.lease(l.ID); got.State != qm.Expired {
		t.Errorf("a multi-node Job past its deadline: lease %s %q, want expired", got.State, got.Reason)
	}
}
