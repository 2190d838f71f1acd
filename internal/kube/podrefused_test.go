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
	"github.com/acme/quartermaster/internal/sim"
)

// failedCreate plays the Job controller when the API server will not take the Job's pod: it
// records a FailedCreate warning on the Job, as the controller does, and makes no pod.
func (w *world) failedCreate(ns, job, message string) {
	w.t.Helper()
	ctx := context.Background()
	j, err := w.cs.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	now := w.svc.Clock.Now()
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job + ".failedcreate"},
		InvolvedObject: corev1.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: ns, Name: job, UID: j.UID},
		Reason:         "FailedCreate", Type: corev1.EventTypeWarning, Message: message, Count: 3,
		FirstTimestamp: metav1.Time{Time: now}, LastTimestamp: metav1.Time{Time: now}}
	if _, err := w.cs.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	w.setJob(ns, job, func(j *batchv1.Job) {
		if j.Status.StartTime == nil {
			j.Status.StartTime = &metav1.Time{Time: now}
		}
	})
}

// TestAPodTheClusterRefusesFailsTheLease: the backend makes a Job, and the Job controller makes its
// pod; a ResourceQuota or LimitRange of the team's namespace, or an admission webhook, refuses the
// pod, not the Job. Kubernetes then makes no pod and says why only in a FailedCreate event on the
// Job. The lease fails with the API server's words, its owner is told, nothing is billed, and the
// Job, which would retry until its deadline, is deleted. A quota that the team's other pods fill
// now, and a create that failed for a reason of the server's own (a webhook it cannot reach), are
// no refusal: the lease waits, saying why, and runs once the Job controller makes its pod.
func TestAPodTheClusterRefusesFailsTheLease(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, message, want string
		refused             bool
	}{
		// The namespace's quota is held by the team's other pods: the pod fits once they end.
		{"quota full", `Error creating: pods "qm-l-1-jupyterlab-7xk2p" is forbidden: exceeded quota: fjord-gpus, requested: requests.memory=16Gi,requests.nvidia.com/mig-3g.40gb=1, used: requests.memory=8Gi,requests.nvidia.com/mig-3g.40gb=2, limited: requests.memory=1Ti,requests.nvidia.com/mig-3g.40gb=2`,
			"exceeded quota: fjord-gpus", false},
		// The pod alone asks for more than the quota allows: it never fits.
		{"quota too small", `Error creating: pods "qm-l-1-jupyterlab-7xk2p" is forbidden: exceeded quota: fjord-gpus, requested: requests.memory=16Gi,requests.nvidia.com/mig-3g.40gb=1, used: requests.memory=0,requests.nvidia.com/mig-3g.40gb=0, limited: requests.memory=1Ti,requests.nvidia.com/mig-3g.40gb=0`,
			"exceeded quota: fjord-gpus", true},
		{"limit range", `Error creating: pods "qm-l-1-jupyterlab-7xk2p" is forbidden: maximum memory usage per Container is 32Gi, but limit is 64Gi`,
			"maximum memory usage per Container is 32Gi", true},
		{"webhook", `Error creating: admission webhook "bilder.kaskade.se" denied the request: images must come from registry.kaskade.se`,
			"images must come from registry.kaskade.se", true},
		{"webhook down", `Error creating: Internal error occurred: failed calling webhook "bilder.kaskade.se": failed to call webhook: Post "https://bilder.kaskade-system.svc:443/validate": dial tcp 10.96.4.7:443: connect: connection refused`,
			"failed calling webhook", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := newKaskade(t)
			l := k.ask("erik@kaskade.example", 1, "notebook", "jupyterlab", 4*time.Hour)
			if l.Ref != "job/qm-fjord/qm-l-1-jupyterlab" {
				t.Fatalf("lease %s %s %q", l.ID, l.State, l.Ref)
			}
			k.world.failedCreate("qm-fjord", "qm-l-1-jupyterlab", c.message)
			k.clock.Advance(time.Minute)
			k.pass()
			got := k.lease(l.ID)
			if !strings.Contains(got.Reason, c.want) {
				t.Errorf("lease %s %q does not say %q", got.State, got.Reason, c.want)
			}
			if !got.StartedAt.IsZero() {
				t.Errorf("a lease whose pod was never made is billed from %s", got.StartedAt)
			}
			if !c.refused {
				if got.State.Ended() {
					t.Errorf("a pod the Job controller may yet make ended the lease: %s %q", got.State, got.Reason)
				}
				if got.State != qm.Queued {
					t.Errorf("lease %s %q, want queued saying why", got.State, got.Reason)
				}
				if len(k.jobs("qm-fjord")) != 1 {
					t.Fatal("the waiting lease's Job was deleted")
				}
				// The Job controller tries again and makes the pod: the lease runs.
				k.runPod("qm-fjord", "qm-l-1-jupyterlab", "mig-01", k.clock.Now())
				k.pass()
				if got := k.lease(l.ID); got.State != qm.Active {
					t.Errorf("lease %s %q once its pod runs", got.State, got.Reason)
				}
				return
			}
			if got.State != qm.Failed {
				t.Errorf("lease %s %q, want failed", got.State, got.Reason)
			}
			if kinds := k.notes.Kinds(l.ID); len(kinds) == 0 || kinds[len(kinds)-1] != qm.NoticeFailed {
				t.Errorf("owner told %v, want that it failed", kinds)
			}
			if n := len(k.jobs("qm-fjord")); n != 0 {
				t.Errorf("%d Jobs left retrying a pod the cluster refuses", n)
			}
			svcs, err := k.cs.CoreV1().Services("qm-fjord").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(svcs.Items) != 0 {
				t.Errorf("%d Services left of a failed lease", len(svcs.Items))
			}
		})
	}
}

// TestAMultiNodeLeaseWhosePodIsRefusedFails: a ResourceQuota that lets a two-node lease's first
// pod in and refuses the second leaves the first holding its node's GPUs for a lease that can
// never run. The lease fails with the server's words, unbilled, and its Job is deleted with the
// pod that runs.
func TestAMultiNodeLeaseWhosePodIsRefusedFails(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	clock := w.svc.Clock.(*sim.Clock)
	l, name := w.multiNode()
	w.setPod("qm-vision", name+"-0-abcde", startedAt("gpu-b", clock.Now()))
	if err := w.cs.CoreV1().Pods("qm-vision").Delete(ctx, name+"-1-abcde", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.failedCreate("qm-vision", name, `Error creating: pods "`+name+`-1-q7w2z" is forbidden: exceeded quota: vision-gpu, requested: requests.nvidia.com/gpu=8, used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8`)
	clock.Advance(time.Minute)
	w.reconcile()
	got := w.lease(l.ID)
	if got.State != qm.Failed || !strings.Contains(got.Reason, "exceeded quota: vision-gpu") || !got.StartedAt.IsZero() {
		t.Errorf("lease %s %q from %v, want failed, unbilled, with the server's words", got.State, got.Reason, got.StartedAt)
	}
	if _, err := w.cs.BatchV1().Jobs("qm-vision").Get(ctx, name, metav1.GetOptions{}); err == nil {
		t.Error("the Job is left, its first pod holding gpu-b's GPUs")
	}
}
