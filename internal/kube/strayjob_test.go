package kube_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/qm"
)

// TestAStrayPodWithALeasesLabelsDoesNotTakeItsJob: a bare pod carrying a running lease's labels
// (lease, team, class, instance) beside the lease's own Job is no workload of the lease; dealing
// with it never deletes the lease's Job or Service, nor the pod itself, and the lease runs on.
func TestAStrayPodWithALeasesLabelsDoesNotTakeItsJob(t *testing.T) {
	ctx := context.Background()
	k := newKaskade(t)
	l := k.ask("erik@kaskade.example", 1, "notebook", "jupyterlab", 3*time.Hour)
	const ns, job = "qm-fjord", "qm-l-1-jupyterlab"
	k.runPod(ns, job, "mig-01", k.clock.Now())
	k.pass()
	if got := k.lease(l.ID); got.State != qm.Active {
		t.Fatalf("lease %s %q", got.State, got.Reason)
	}
	k.handMade(ns, job, "mig-01", map[string]string{kube.LabelLease: l.ID.String(), kube.LabelTeam: "fjord",
		kube.LabelClass: "notebook", kube.LabelInstance: kube.DefaultInstance})
	k.clock.Advance(time.Minute)
	k.pass()
	k.pass()
	if _, err := k.cs.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{}); err != nil {
		t.Errorf("the lease's own Job: %v", err)
	}
	if _, err := k.cs.CoreV1().Services(ns).Get(ctx, job, metav1.GetOptions{}); err != nil {
		t.Errorf("the lease's own Service: %v", err)
	}
	if got := k.lease(l.ID); got.State != qm.Active {
		t.Errorf("lease %s %q after a stray pod carried its labels", got.State, got.Reason)
	}
	if _, err := k.cs.CoreV1().Pods(ns).Get(ctx, job, metav1.GetOptions{}); err != nil {
		t.Errorf("the pod made by hand, which is not the lease's: %v", err)
	}

	// A Job made by hand with the lease's labels is no workload of the lease either: dealing with
	// it leaves the lease's own Job and Service alone.
	stray := k.job(ns, job).DeepCopy()
	stray.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "copy-of-" + job, Labels: stray.Labels}
	if _, err := k.cs.BatchV1().Jobs(ns).Create(ctx, stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	k.pass()
	k.pass()
	if _, err := k.cs.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{}); err != nil {
		t.Errorf("the lease's own Job after a Job made by hand carried its labels: %v", err)
	}
	if _, err := k.cs.CoreV1().Services(ns).Get(ctx, job, metav1.GetOptions{}); err != nil {
		t.Errorf("the lease's own Service after a Job made by hand carried its labels: %v", err)
	}
	if got := k.lease(l.ID); got.State != qm.Active {
		t.Errorf("lease %s %q after a Job made by hand carried its labels", got.State, got.Reason)
	}
}
