package kube_test

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/acme/quartermaster/internal/qm"
)

// handMade is a pod someone made with kubectl in a team's namespace, carrying labels copied from
// a lease's Job (its lease, team, class and instance labels among them), running on node.
func (k *kaskade) handMade(ns, name, node string, labels map[string]string, owners ...metav1.OwnerReference) {
	k.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, UID: types.UID(name + "-uid"), OwnerReferences: owners},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "main",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: k.clock.Now()}}}}}}}
	if _, err := k.cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		k.t.Fatal(err)
	}
}

// TestAPodMadeByHandWithALeasesLabelsIsNotItsPod: a pod that carries a waiting lease's labels and
// names its Job (the job-name label, even an owner reference by the Job's name), but that the Job
// does not own (its owner's UID is not the Job's), is not the lease's workload: the lease stays
// queued and unbilled until its own pod runs, which Kubernetes says by the owner reference the Job
// controller writes.
func TestAPodMadeByHandWithALeasesLabelsIsNotItsPod(t *testing.T) {
	k := newKaskade(t)
	l := k.ask("erik@kaskade.example", 1, "notebook", "jupyterlab", 3*time.Hour)
	const ns, job = "qm-fjord", "qm-l-1-jupyterlab"
	k.setJob(ns, job, func(j *batchv1.Job) { j.UID = "3f6c2a9e-job" })
	labels := map[string]string{}
	for key, v := range k.job(ns, job).Spec.Template.Labels {
		labels[key] = v
	}
	labels["batch.kubernetes.io/job-name"] = job
	k.handMade(ns, "copied-labels", "mig-01", labels)
	k.handMade(ns, "forged-owner", "mig-01", labels, metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: job, UID: "not-the-jobs"})
	k.clock.Advance(time.Minute)
	k.pass()
	got := k.lease(l.ID)
	if got.State == qm.Active || !got.StartedAt.IsZero() {
		t.Fatalf("lease %s from %v on %q: a pod made by hand started it", got.State, got.StartedAt, got.Node)
	}

	// Its own pod runs: now it is active, on that pod's node.
	k.runPod(ns, job, "mig-01", k.clock.Now())
	k.pass()
	if got := k.lease(l.ID); got.State != qm.Active {
		t.Errorf("lease %s %q once its own pod runs", got.State, got.Reason)
	}
}
