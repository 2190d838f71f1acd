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

// jobEvent plays the Job controller's event recorder: an event on the Job, of reason
// (FailedCreate, SuccessfulCreate), that last happened at; name tells events of the Job apart.
func (w *world) jobEvent(ns, job, name, reason, message string, at time.Time) {
	w.t.Helper()
	ctx := context.Background()
	j, err := w.cs.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	typ := corev1.EventTypeNormal
	if reason == "FailedCreate" {
		typ = corev1.EventTypeWarning
	}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job + "." + name},
		InvolvedObject: corev1.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: ns, Name: job, UID: j.UID},
		Reason:         reason, Type: typ, Message: message, Count: 1, Source: corev1.EventSource{Component: "job-controller"},
		FirstTimestamp: metav1.Time{Time: at}, LastTimestamp: metav1.Time{Time: at}}
	if _, err := w.cs.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// TestAnOldPodRefusalDoesNotFailALeaseWhosePodWasMadeSince: the Job controller was refused a
// lease's pod (a ResourceQuota of no GPUs), a cluster admin raised the quota, and the controller
// made the pod on its next try: the Job's FailedCreate event stays (an hour, as events do), older
// than its SuccessfulCreate. The workspace ran, its pod was lost, and the Job (a layout whose
// backoffLimit lets it) makes another: the lease waits for it, and is not failed with the quota's
// old words. A refusal after the Job's last pod was made (the new pod, refused by a LimitRange
// now) still fails it.
func TestAnOldPodRefusalDoesNotFailALeaseWhosePodWasMadeSince(t *testing.T) {
	ctx := context.Background()
	k := newKaskade(t)
	k.reconcile()
	l := k.ask("erik@kaskade.example", 1, "notebook", "jupyterlab", 6*time.Hour)
	const ns, job = "qm-fjord", "qm-l-1-jupyterlab"
	refusedAt := k.clock.Now()
	k.jobEvent(ns, job, "quota", "FailedCreate", `Error creating: pods "qm-l-1-jupyterlab-b7k2m" is forbidden: exceeded quota: fjord-mig, requested: requests.nvidia.com/mig-3g.40gb=1, used: requests.nvidia.com/mig-3g.40gb=0, limited: requests.nvidia.com/mig-3g.40gb=0`, refusedAt)
	k.setJob(ns, job, func(j *batchv1.Job) {
		limit := int32(3)
		j.Spec.BackoffLimit = &limit
	})
	k.clock.Advance(20 * time.Second)
	k.jobEvent(ns, job, "created", "SuccessfulCreate", "Created pod: "+job+"-x1", k.clock.Now())
	k.runPod(ns, job, "mig-01", k.clock.Now())
	k.pass()
	if got := k.lease(l.ID); got.State != qm.Active {
		t.Fatalf("lease %s %q once its pod runs", got.State, got.Reason)
	}

	// An hour on, its pod is lost, and the Job makes another.
	k.clock.Advance(time.Hour)
	if err := k.cs.CoreV1().Pods(ns).Delete(ctx, job+"-x1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	k.setJob(ns, job, func(j *batchv1.Job) { j.Status.Active, j.Status.Failed = 0, 1 })
	k.pass()
	got := k.lease(l.ID)
	if got.State.Ended() || strings.Contains(got.Reason, "exceeded quota") {
		t.Errorf("lease %s %q: a refusal from before its pod was made ended it", got.State, got.Reason)
	}
	if !qm.Requeued(got) {
		t.Errorf("lease %s %q, want back in the queue while the Job makes another pod", got.State, got.Reason)
	}

	// The Job controller's next try is refused now.
	k.clock.Advance(10 * time.Second)
	k.jobEvent(ns, job, "limitrange", "FailedCreate", `Error creating: pods "qm-l-1-jupyterlab-z9q4t" is forbidden: maximum memory usage per Container is 24Gi, but limit is 48Gi`, k.clock.Now())
	k.pass()
	if got := k.lease(l.ID); got.State != qm.Failed || !strings.Contains(got.Reason, "maximum memory usage per Container is 24Gi") {
		t.Errorf("lease %s %q, want failed with the refusal of its new pod", got.State, got.Reason)
	}
	if n := len(k.jobs(ns)); n != 0 {
		t.Errorf("%d Jobs left retrying a pod the cluster refuses", n)
	}
}
