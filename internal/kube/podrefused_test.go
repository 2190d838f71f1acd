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

// failedCreate plays the Job controller when the API server will not take the Job's pod: it
// records a FailedCreate warning on the Job, as the controller does, and makes no pod.
func (k *kaskade) failedCreate(ns, job, message string) {
	k.t.Helper()
	j := k.job(ns, job)
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job + ".failedcreate"},
		InvolvedObject: corev1.ObjectReference{Kind: "Job", APIVersion: "batch/v1", Namespace: ns, Name: job, UID: j.UID},
		Reason:         "FailedCreate", Type: corev1.EventTypeWarning, Message: message, Count: 3,
		FirstTimestamp: metav1.Time{Time: k.clock.Now()}, LastTimestamp: metav1.Time{Time: k.clock.Now()}}
	if _, err := k.cs.CoreV1().Events(ns).Create(context.Background(), ev, metav1.CreateOptions{}); err != nil {
		k.t.Fatal(err)
	}
	k.setJob(ns, job, func(j *batchv1.Job) { j.Status.StartTime = &metav1.Time{Time: k.clock.Now()} })
}

// TestAPodTheClusterRefusesFailsTheLease: the backend makes a Job, and the Job controller makes its
// pod; a ResourceQuota or LimitRange of the team's namespace, or an admission webhook, refuses the
// pod, not the Job. Kubernetes then makes no pod and says why only in a FailedCreate event on the
// Job. The lease fails with the API server's words, its owner is told, nothing is billed, and the
// Job, which would retry until its deadline, is deleted. A create that failed for a reason of the
// server's own (a webhook it cannot reach) is no refusal: the lease waits, saying why.
func TestAPodTheClusterRefusesFailsTheLease(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, message, want string
		refused             bool
	}{
		{"quota", `Error creating: pods "qm-l-1-jupyterlab-7xk2p" is forbidden: exceeded quota: fjord-gpus, requested: requests.nvidia.com/mig-3g.40gb=1, used: requests.nvidia.com/mig-3g.40gb=2, limited: requests.nvidia.com/mig-3g.40gb=2`,
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
			k.failedCreate("qm-fjord", "qm-l-1-jupyterlab", c.message)
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
					t.Errorf("a create that failed on the server's side ended the lease: %s %q", got.State, got.Reason)
				}
				if len(k.jobs("qm-fjord")) != 1 {
					t.Error("the waiting lease's Job was deleted")
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
