package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/qm"
)

// TestAJobMadeBeforeTheLeaseIsNotAdopted: a Job that already has the name and labels a new lease's
// Job would have, made before the lease was asked for (left by an installation whose database
// was started afresh, which numbers its leases from L-1 again, or made by hand), is not the
// lease's: a start that finds it does not take it as its own, so its pod that runs neither
// starts nor bills the new lease. The lease fails, saying which Job is in the way (and the start
// leaves it as it is); asked again, the new lease's Job has a name of its own.
func TestAJobMadeBeforeTheLeaseIsNotAdopted(t *testing.T) {
	ctx := context.Background()
	k := newKaskade(t)
	const ns, name = "qm-fjord", "qm-l-1-jupyterlab"
	old := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "old-job",
		CreationTimestamp: metav1.Time{Time: k.clock.Now().Add(-26 * time.Hour)},
		Labels:            map[string]string{kube.LabelLease: "L-1", kube.LabelTeam: "fjord", kube.LabelClass: "notebook", kube.LabelInstance: kube.DefaultInstance}}}
	old.Spec.Template.Labels = old.Labels
	if _, err := k.cs.BatchV1().Jobs(ns).Create(ctx, old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-old", UID: types.UID("old-pod"), Labels: old.Labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: name, UID: "old-job"}}},
		Spec: corev1.PodSpec{NodeName: "mig-01"}, Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "main",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: k.clock.Now().Add(-25 * time.Hour)}}}}}}}
	if _, err := k.cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	_, err := k.svc.Request(ctx, qm.LeaseRequest{User: "erik@kaskade.example", GPUs: 1, Class: "notebook", Duration: 2 * time.Hour, Template: "jupyterlab"})
	if err == nil || !strings.Contains(err.Error(), "Job "+name) || !strings.Contains(err.Error(), ns) {
		t.Errorf("the request's reply %v does not name Job %s in %s", err, name, ns)
	}
	if j := k.job(ns, name); j.UID != "old-job" {
		t.Errorf("the Job in the way is now %s", j.UID)
	}
	if _, err := k.cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the pod of the Job in the way: %v", err)
	}
	k.clock.Advance(time.Minute)
	k.pass()
	got := k.lease(1)
	if got.State == qm.Active || !got.StartedAt.IsZero() {
		t.Fatalf("lease %s from %v: it took a Job made a day before it was asked for", got.State, got.StartedAt)
	}
	if got.State != qm.Failed || !strings.Contains(got.Reason, name) || !strings.Contains(got.Reason, ns) {
		t.Errorf("lease %s %q, want failed naming Job %s in %s", got.State, got.Reason, name, ns)
	}
	if _, err := k.cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
		t.Error("the failed start left its Service")
	}

	// Asked again, the lease is L-2, whose Job has a name of its own.
	again := k.ask("erik@kaskade.example", 1, "notebook", "jupyterlab", 2*time.Hour)
	if again.State.Ended() || again.Ref != "job/qm-fjord/qm-l-2-jupyterlab" {
		t.Errorf("asked again: lease %s %s %q %q", again.ID, again.State, again.Ref, again.Reason)
	}
}
