package kube_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
)

// deletePod plays whoever deleted a pod (kubectl delete, the pod garbage collector after its node
// went away) and the API server that removed it: it is gone before the next pass lists the pods.
func (w *world) deletePod(ns, name string) {
	w.t.Helper()
	if err := w.cs.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// replacement plays the Job controller making another pod for a Job whose pod was lost.
func (w *world) replacement(ns, job, name string, fn func(*corev1.Pod)) {
	w.t.Helper()
	ctx := context.Background()
	k, err := w.cs.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: k.Spec.Template.Labels, UID: types.UID(name + "-uid"),
		OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: job, APIVersion: "batch/v1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	fn(p)
	if _, err := w.cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// TestAWorkspaceWhosePodVanishedFails: a running workspace's pod is lost (its node died, someone
// deleted it) and is gone before a pass sees it. The Job says so only in its status: the failed
// pod it counted (or has yet to count) and, a moment later, its Failed condition. With the
// template's backoffLimit of 0 the Job makes no other pod, so the lease fails, saying its pod is
// gone, its owner is told, and the Job is deleted; it is not taken for a Job whose pod is not made
// yet, and not left running.
func TestAWorkspaceWhosePodVanishedFails(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  func(*batchv1.Job)
		deleted bool // the Job is deleted at once (it has not ended on its own yet)
	}{
		{"counted", func(k *batchv1.Job) { k.Status.Active, k.Status.Failed = 0, 1 }, true},
		{"not counted yet", func(k *batchv1.Job) {
			k.Status.Active = 0
			k.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Failed: []types.UID{"qm-l-1-jupyterlab-x1-uid"}}
		}, true},
		{"the Job failed", func(k *batchv1.Job) {
			k.Status.Active, k.Status.Failed = 0, 1
			k.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			clock := w.svc.Clock.(*sim.Clock)
			ws := w.request(1, "interactive", "jupyterlab")
			w.addJobPod("qm-vision", "qm-l-1-jupyterlab", corev1.PodPending, "")
			w.setPod("qm-vision", "qm-l-1-jupyterlab-x1", startedAt("gpu-a", clock.Now()))
			w.setJob("qm-vision", "qm-l-1-jupyterlab", func(k *batchv1.Job) { k.Status.Active = 1 })
			w.reconcile()
			if l := w.lease(ws.ID); l.State != qm.Active {
				t.Fatalf("running: lease %s %q", l.State, l.Reason)
			}
			clock.Advance(20 * time.Minute)
			w.deletePod("qm-vision", "qm-l-1-jupyterlab-x1")

			// Before the Job controller sees the pod gone, its status still counts it active:
			// nothing to say yet.
			w.reconcile()
			if l := w.lease(ws.ID); l.State != qm.Active || qm.Halted(l) {
				t.Errorf("pod gone, the Job's status not updated yet: lease %s %q, want it left as it is", l.State, l.Reason)
			}
			if k := w.notes.Kinds(ws.ID); len(k) != 1 {
				t.Errorf("pod gone, the Job's status not updated yet: owner told %v", k)
			}

			w.setJob("qm-vision", "qm-l-1-jupyterlab", tc.status)
			w.reconcile()
			l := w.lease(ws.ID)
			if l.State != qm.Failed || !strings.Contains(l.Reason, "its pod was deleted outside Quartermaster") {
				t.Errorf("pod gone, its node still there: lease %s %q, want failed saying its pod was deleted outside Quartermaster", l.State, l.Reason)
			}
			if k := w.notes.Kinds(ws.ID); len(k) != 2 || k[1] != qm.NoticeFailed {
				t.Errorf("owner told %v, want granted, then failed", k)
			}
			_, err := w.cs.BatchV1().Jobs("qm-vision").Get(context.Background(), "qm-l-1-jupyterlab", metav1.GetOptions{})
			if tc.deleted && !apierrors.IsNotFound(err) {
				t.Errorf("the Job of a lease whose pod is gone is still there: %v", err)
			}
		})
	}
}

// TestAWorkspaceWhosePodVanishedRestarts: with a layout of the install's own that lets the Job make
// another pod (backoffLimit above its failures), a workspace whose pod was lost and is gone is not
// failed: it does not run until the new pod does, so its owner hears that it went back to the
// queue and why, then where it runs again. Where the new pod already runs when a pass first sees
// the loss, its owner is told that the workspace restarted, once.
func TestAWorkspaceWhosePodVanishedRestarts(t *testing.T) {
	setup := func(t *testing.T) (*world, *sim.Clock, *qm.Lease) {
		w := newWorld(t)
		clock := w.svc.Clock.(*sim.Clock)
		ws := w.request(2, "train", "cuda-smoke")
		w.setJob("qm-vision", "qm-l-1-cuda-smoke", func(k *batchv1.Job) { k.Spec.BackoffLimit = new(int32); *k.Spec.BackoffLimit = 2 })
		w.addJobPod("qm-vision", "qm-l-1-cuda-smoke", corev1.PodPending, "")
		w.setPod("qm-vision", "qm-l-1-cuda-smoke-x1", startedAt("gpu-b", clock.Now()))
		w.reconcile()
		if l := w.lease(ws.ID); l.State != qm.Active || l.Node != "gpu-b" {
			t.Fatalf("running: lease %s %q on %q", l.State, l.Reason, l.Node)
		}
		clock.Advance(20 * time.Minute)
		w.deletePod("qm-vision", "qm-l-1-cuda-smoke-x1")
		w.setJob("qm-vision", "qm-l-1-cuda-smoke", func(k *batchv1.Job) { k.Status.Active, k.Status.Failed = 0, 1 })
		return w, clock, ws
	}

	t.Run("seen waiting", func(t *testing.T) {
		w, clock, ws := setup(t)
		w.reconcile()
		l := w.lease(ws.ID)
		if !qm.Requeued(l) || !strings.Contains(l.Reason, "its pod was deleted outside Quartermaster") {
			t.Errorf("pod gone, the Job making another: lease %s %q, want back in the queue saying its pod was deleted", l.State, l.Reason)
		}
		if k := w.notes.Kinds(ws.ID); len(k) != 2 || k[1] != qm.NoticeRequeued {
			t.Errorf("owner told %v, want granted, then requeued", k)
		}
		w.replacement("qm-vision", "qm-l-1-cuda-smoke", "qm-l-1-cuda-smoke-x2", startedAt("gpu-c", clock.Now()))
		w.reconcile()
		if l := w.lease(ws.ID); l.State != qm.Active || qm.Halted(l) || l.Node != "gpu-c" {
			t.Errorf("new pod running: lease %s %q on %q", l.State, l.Reason, l.Node)
		}
		if k := w.notes.Kinds(ws.ID); len(k) != 3 || k[2] != qm.NoticeGranted {
			t.Errorf("owner told %v, want granted, requeued, granted", k)
		}
	})

	// A pod failure policy that ignores a pod's disruption (its node lost, a preemption) has the
	// Job make another without counting a failure: with no pod left, the Job looks like one whose
	// pod is not made yet, but the lease had run, so it waits again, and its owner is told.
	t.Run("not counted", func(t *testing.T) {
		w, clock, ws := setup(t)
		w.setJob("qm-vision", "qm-l-1-cuda-smoke", func(k *batchv1.Job) { k.Status.Active, k.Status.Failed = 0, 0 })
		w.reconcile()
		if l := w.lease(ws.ID); !qm.Requeued(l) {
			t.Errorf("pod gone, the Job making another uncounted: lease %s %q, want back in the queue", l.State, l.Reason)
		}
		w.replacement("qm-vision", "qm-l-1-cuda-smoke", "qm-l-1-cuda-smoke-x2", startingOn("gpu-c"))
		w.reconcile()
		if l := w.lease(ws.ID); !qm.Requeued(l) {
			t.Errorf("new pod starting: lease %s %q, want still back in the queue", l.State, l.Reason)
		}
		w.setPod("qm-vision", "qm-l-1-cuda-smoke-x2", startedAt("gpu-c", clock.Now()))
		w.reconcile()
		if l := w.lease(ws.ID); l.State != qm.Active || qm.Halted(l) || l.Node != "gpu-c" {
			t.Errorf("new pod running: lease %s %q on %q", l.State, l.Reason, l.Node)
		}
		if k := w.notes.Kinds(ws.ID); len(k) != 3 || k[1] != qm.NoticeRequeued || k[2] != qm.NoticeGranted {
			t.Errorf("owner told %v, want granted, requeued, granted", k)
		}
	})

	for _, node := range []string{"gpu-b", "gpu-c"} {
		t.Run(fmt.Sprintf("already running on %s", node), func(t *testing.T) {
			w, clock, ws := setup(t)
			clock.Advance(time.Minute)
			w.replacement("qm-vision", "qm-l-1-cuda-smoke", "qm-l-1-cuda-smoke-x2", startedAt(node, clock.Now().Add(-30*time.Second)))
			w.setJob("qm-vision", "qm-l-1-cuda-smoke", func(k *batchv1.Job) { k.Status.Active = 1 })
			for range 2 {
				w.reconcile()
				clock.Advance(5 * time.Second)
			}
			l := w.lease(ws.ID)
			if l.State != qm.Active || qm.Halted(l) || l.Node != node || !strings.Contains(l.Reason, "restarted") || !strings.Contains(l.Reason, "its pod was deleted outside Quartermaster (its node gpu-b") {
				t.Errorf("new pod already running: lease %s %q on %q, want active on %s saying it restarted and why", l.State, l.Reason, l.Node, node)
			}
			if k := w.notes.Kinds(ws.ID); len(k) != 2 || k[1] != qm.NoticeRestarted {
				t.Errorf("owner told %v, want granted, then restarted once", k)
			}
		})
	}
}

// TestAMultiNodeLeaseWhosePodVanishedFails: a multi-node lease whose pod was lost and is gone
// before a pass saw it fails as one that saw its pod fail does, from the failure the Job counts,
// even once the Job controller has made a new pod: that pod would join a world that is gone. The
// Job is deleted, so that the pod left does not hold its GPUs.
func TestAMultiNodeLeaseWhosePodVanishedFails(t *testing.T) {
	for _, tc := range []struct {
		name        string
		status      func(*batchv1.Job)
		replacement bool
	}{
		{"counted", func(k *batchv1.Job) { k.Status.Active, k.Status.Failed = 1, 1 }, false},
		{"not counted yet", func(k *batchv1.Job) {
			k.Status.Active = 1
			k.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Failed: []types.UID{"uid-1"}}
		}, false},
		{"replaced", func(k *batchv1.Job) { k.Status.Active, k.Status.Failed = 2, 1 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			clock := w.svc.Clock.(*sim.Clock)
			l, name := w.multiNode()
			pod := func(i int) string { return fmt.Sprintf("%s-%d-abcde", name, i) }
			w.setPod("qm-vision", pod(0), startedAt("gpu-b", clock.Now()))
			w.setPod("qm-vision", pod(1), startedAt("gpu-c", clock.Now()))
			w.setJob("qm-vision", name, func(k *batchv1.Job) { k.Status.Active = 2 })
			w.reconcile()
			if got := w.lease(l.ID); got.State != qm.Active {
				t.Fatalf("both pods running: lease %s %q", got.State, got.Reason)
			}
			clock.Advance(20 * time.Minute)
			w.deletePod("qm-vision", pod(1))
			w.reconcile()
			if got := w.lease(l.ID); got.State != qm.Active || qm.Halted(got) {
				t.Errorf("pod gone, the Job's status not updated yet: lease %s %q, want it left as it is", got.State, got.Reason)
			}
			w.setJob("qm-vision", name, tc.status)
			if tc.replacement {
				w.replacement("qm-vision", name, name+"-1-fghij", unschedulable)
			}
			w.reconcile()
			got := w.lease(l.ID)
			if got.State != qm.Failed || !strings.Contains(got.Reason, "deleted outside Quartermaster (its node gpu-c") || !strings.Contains(got.Reason, "one of its 2 pods") {
				t.Errorf("a pod of a running 2-node lease gone: lease %s %q, want failed saying one of its pods is gone", got.State, got.Reason)
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

// TestAPodThatEndedIsNoLostPod: a workspace whose pod finished (or failed) a moment before the Job
// controller says so in a condition has no pod running and none waiting, as one whose pod is
// lost; it is left as it is until the Job says how it ended, not sent back to the queue.
func TestAPodThatEndedIsNoLostPod(t *testing.T) {
	for _, phase := range []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed} {
		t.Run(string(phase), func(t *testing.T) {
			w := newWorld(t)
			clock := w.svc.Clock.(*sim.Clock)
			ws := w.request(1, "train", "cuda-smoke")
			w.addJobPod("qm-vision", "qm-l-1-cuda-smoke", corev1.PodPending, "")
			w.setPod("qm-vision", "qm-l-1-cuda-smoke-x1", startedAt("gpu-b", clock.Now()))
			w.reconcile()
			clock.Advance(20 * time.Minute)
			w.setPod("qm-vision", "qm-l-1-cuda-smoke-x1", func(p *corev1.Pod) { p.Status.Phase = phase })
			w.reconcile()
			if l := w.lease(ws.ID); l.State != qm.Active || qm.Halted(l) {
				t.Errorf("pod %s, the Job's condition not set yet: lease %s %q, want it left as it is", phase, l.State, l.Reason)
			}
			if k := w.notes.Kinds(ws.ID); len(k) != 1 {
				t.Errorf("pod %s, the Job's condition not set yet: owner told %v", phase, k)
			}
		})
	}
}

// TestAVanishedPodSaysWhatTheClusterKnows: a running workspace's pod is gone before a pass sees
// it end. Where the API tells why, the lease's reason says it: its node is gone from the cluster
// (the pod went with it), or its node is still there and ready (someone deleted the pod outside
// Quartermaster), or its node is there but not ready. Where the API cannot tell (the node cannot
// be read), the words stay "its pod is gone (deleted, or lost with its node)".
func TestAVanishedPodSaysWhatTheClusterKnows(t *testing.T) {
	for _, tc := range []struct {
		name string
		node func(w *world) // what became of gpu-a meanwhile
		want []string
	}{
		{"node gone", func(w *world) {
			if err := w.cs.CoreV1().Nodes().Delete(context.Background(), "gpu-a", metav1.DeleteOptions{}); err != nil {
				w.t.Fatal(err)
			}
		}, []string{"gpu-a", "no longer in the cluster"}},
		{"node there", func(*world) {}, []string{"deleted outside Quartermaster", "gpu-a"}},
		{"node not ready", func(w *world) {
			n, err := w.cs.CoreV1().Nodes().Get(context.Background(), "gpu-a", metav1.GetOptions{})
			if err != nil {
				w.t.Fatal(err)
			}
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}
			if _, err := w.cs.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
				w.t.Fatal(err)
			}
		}, []string{"gpu-a", "not ready"}},
		{"node unreadable", func(w *world) {
			w.cs.PrependReactor("get", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, errors.New("connection refused")
			})
		}, []string{"its pod is gone (deleted, or lost with its node)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			clock := w.svc.Clock.(*sim.Clock)
			ws := w.request(1, "interactive", "jupyterlab")
			w.addJobPod("qm-vision", "qm-l-1-jupyterlab", corev1.PodPending, "")
			w.setPod("qm-vision", "qm-l-1-jupyterlab-x1", startedAt("gpu-a", clock.Now()))
			w.setJob("qm-vision", "qm-l-1-jupyterlab", func(k *batchv1.Job) { k.Status.Active = 1 })
			w.reconcile()
			if l := w.lease(ws.ID); l.State != qm.Active {
				t.Fatalf("running: lease %s %q", l.State, l.Reason)
			}
			clock.Advance(20 * time.Minute)
			w.deletePod("qm-vision", "qm-l-1-jupyterlab-x1")
			tc.node(w)
			w.setJob("qm-vision", "qm-l-1-jupyterlab", func(k *batchv1.Job) { k.Status.Active, k.Status.Failed = 0, 1 })
			w.reconcile()
			l := w.lease(ws.ID)
			t.Logf("%s %q", l.State, l.Reason)
			for _, s := range tc.want {
				if l.State != qm.Failed || !strings.Contains(l.Reason, s) {
					t.Errorf("pod gone (%s): lease %s %q, want failed saying %q", tc.name, l.State, l.Reason, s)
				}
			}
			if n := w.notes.Of(qm.NoticeFailed, ws.ID); len(n) == 0 || n[0].Lease.Reason != l.Reason {
				t.Errorf("the owner was not told %q: %+v", l.Reason, n)
			}
		})
	}
}
