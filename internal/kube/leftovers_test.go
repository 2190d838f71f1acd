package kube_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/qm"
)

func (k *kaskade) services(ns string) map[string]bool {
	k.t.Helper()
	l, err := k.cs.CoreV1().Services(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	out := map[string]bool{}
	for _, s := range l.Items {
		out[s.Name] = true
	}
	return out
}

func (k *kaskade) addService(ns, name, lease, instance string) {
	k.t.Helper()
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{kube.LabelLease: lease, kube.LabelTeam: "fjord", kube.LabelClass: "notebook", kube.LabelInstance: instance}}}
	if _, err := k.cs.CoreV1().Services(ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		k.t.Fatal(err)
	}
}

// TestWhatASweepMissedIsDeletedByALaterPass: a lease whose Job was deleted outside Quartermaster
// (its pod orphaned) fails, but the service stops before it deletes the lease's Service and pod.
// A later pass, after a restart, finds them by their labels and deletes them, a bounded number of
// leases' worth per pass; it leaves alone the objects of a lease that is still running or waits,
// and another installation's objects of a lease of the same number.
func TestWhatASweepMissedIsDeletedByALaterPass(t *testing.T) {
	ctx := context.Background()
	k := newKaskade(t)
	var down atomic.Bool // the service is going away: its deletes do not reach the API server
	refuse := func(k8stesting.Action) (bool, runtime.Object, error) {
		if down.Load() {
			return true, nil, errors.New("context canceled")
		}
		return false, nil, nil
	}
	k.cs.PrependReactor("delete", "services", refuse)
	k.cs.PrependReactor("delete", "pods", refuse)
	k.reconcile()

	gone := k.ask("erik@kaskade.example", 1, "notebook", "jupyterlab", 2*time.Hour)
	k.runPod("qm-fjord", "qm-l-1-jupyterlab", "mig-01", k.clock.Now())
	stays := k.ask("erik@kaskade.example", 1, "notebook", "jupyterlab", 2*time.Hour)
	k.runPod("qm-fjord", "qm-l-2-jupyterlab", "mig-01", k.clock.Now())
	k.reconcile()
	if k.lease(gone.ID).State != qm.Active || k.lease(stays.ID).State != qm.Active {
		t.Fatalf("leases: %s, %s", k.lease(gone.ID).State, k.lease(stays.ID).State)
	}
	before := k.services("qm-fjord")
	// Another installation on the cluster has an L-1 too; L-4 waits in the queue behind L-3, with
	// a Service as a start in flight would have made before its Job.
	k.addService("qm-fjord", "other-l-1", "L-1", "qm-other")
	k.ask("erik@kaskade.example", 8, "tung", "cuda-smoke", time.Hour)
	if l := k.ask("astrid@kaskade.example", 4, "tung", "cuda-smoke", time.Hour); l.State != qm.Queued || l.ID != 4 {
		t.Fatalf("%s: %s %q", l.ID, l.State, l.Reason)
	}
	k.addService("qm-fjord", "waits-l-4", "L-4", kube.DefaultInstance)
	// Leases that ended long ago, whose Services a sweep missed.
	for i := 100; i < 125; i++ {
		k.addService("qm-fjord", fmt.Sprintf("old-l-%d", i), fmt.Sprintf("L-%d", i), kube.DefaultInstance)
	}

	k.clock.Advance(20 * time.Minute)
	if err := k.cs.BatchV1().Jobs("qm-fjord").Delete(ctx, "qm-l-1-jupyterlab", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	down.Store(true)
	_, _ = k.svc.Reconcile(ctx) // fails the lease; its sweep does not get through
	if got := k.lease(gone.ID); got.State != qm.Failed {
		t.Fatalf("L-1 after its Job was deleted: %s %q", got.State, got.Reason)
	}
	down.Store(false)

	k.svc = k.service() // the service starts again
	k.clock.Advance(time.Minute)
	k.pass()
	left := k.services("qm-fjord")
	old := 0
	for i := 100; i < 125; i++ {
		if left[fmt.Sprintf("old-l-%d", i)] {
			old++
		}
	}
	if old == 0 || old == 25 {
		t.Errorf("one pass left %d of 25 ended leases' Services: want some deleted, not all at once", old)
	}
	for i := 0; i < 3; i++ {
		k.pass()
	}
	left = k.services("qm-fjord")
	for name := range before {
		if name == "qm-l-1-jupyterlab" && left[name] {
			t.Errorf("the failed lease's Service %s is still there", name)
		}
		if name == "qm-l-2-jupyterlab" && !left[name] {
			t.Errorf("the running lease's Service %s was deleted", name)
		}
	}
	for i := 100; i < 125; i++ {
		if left[fmt.Sprintf("old-l-%d", i)] {
			t.Errorf("old-l-%d is still there", i)
		}
	}
	if !left["other-l-1"] || !left["waits-l-4"] {
		t.Errorf("deleted another installation's Service or one of a lease that waits: left %v", left)
	}
	if _, err := k.cs.CoreV1().Pods("qm-fjord").Get(ctx, "qm-l-1-jupyterlab-x1", metav1.GetOptions{}); err == nil {
		t.Errorf("the failed lease's orphaned pod is still there")
	}
	if _, err := k.cs.CoreV1().Pods("qm-fjord").Get(ctx, "qm-l-2-jupyterlab-x1", metav1.GetOptions{}); err != nil {
		t.Errorf("the running lease's pod: %v", err)
	}
	if got := k.lease(stays.ID); got.State != qm.Active {
		t.Errorf("the running lease: %s %q", got.State, got.Reason)
	}
}

// TestASweepThatKeepsFailingDoesNotStarveTheRest: ten ended leases' Services cannot be deleted
// (the API server refuses: RBAC, a namespace stuck terminating); they have the lowest lease
// numbers. The other ended leases' Services are still deleted by the next passes, and each stuck
// lease is said once in the log, as a warning with what to do, however many passes fail on it.
func TestASweepThatKeepsFailingDoesNotStarveTheRest(t *testing.T) {
	ctx := context.Background()
	k := newKaskade(t)
	var logged bytes.Buffer
	k.svc.Logger = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
	k.cs.PrependReactor("delete", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name := a.(k8stesting.DeleteAction).GetName()
		if strings.HasPrefix(name, "stuck-") {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, name, errors.New("no RBAC"))
		}
		return false, nil, nil
	})
	for i := 200; i < 210; i++ {
		k.addService("qm-fjord", fmt.Sprintf("stuck-l-%d", i), fmt.Sprintf("L-%d", i), kube.DefaultInstance)
	}
	for i := 300; i < 305; i++ {
		k.addService("qm-fjord", fmt.Sprintf("old-l-%d", i), fmt.Sprintf("L-%d", i), kube.DefaultInstance)
	}
	for pass := 0; pass < 8; pass++ {
		_, _ = k.svc.Reconcile(ctx)
		k.clock.Advance(30 * time.Minute)
	}
	left := k.services("qm-fjord")
	for i := 300; i < 305; i++ {
		if left[fmt.Sprintf("old-l-%d", i)] {
			t.Errorf("old-l-%d is still there after 8 passes: the stuck leases starve it", i)
		}
	}
	for i := 200; i < 210; i++ {
		if n := strings.Count(logged.String(), fmt.Sprintf("lease=L-%d ", i)); n != 1 {
			t.Errorf("L-%d said %d times in the log, want once:\n%s", i, n, logged.String())
		}
	}
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "kubectl") {
		t.Errorf("the log does not say what to do about a delete that keeps failing:\n%s", logged.String())
	}
}
