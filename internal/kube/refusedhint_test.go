package kube_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/qm"
)

// TestAPodRefusalReadsAsAJobRefusal: the cluster refuses a lease's pod (a FailedCreate event on
// its Job: a LimitRange's maximum) or its Job itself (the create answered 403, for a lease the
// tick started from the queue); either way its owner reads one failed notice with the server's
// words, that nothing was billed and that they should send it to their platform admins if asking
// again gets the same answer, as the reply to a request refused at once says.
func TestAPodRefusalReadsAsAJobRefusal(t *testing.T) {
	ctx := context.Background()
	k := newKaskade(t)
	k.reconcile()
	bot := &commands.Bot{Svc: k.svc}
	failedNotice := func(id qm.LeaseID) string {
		t.Helper()
		ns := k.notes.Of(qm.NoticeFailed, id)
		if len(ns) != 1 {
			t.Fatalf("%s: %d failed notices (%v), want one", id, len(ns), k.notes.Kinds(id))
		}
		rs := bot.RenderNotice(ctx, ns[0])
		if len(rs) == 0 {
			t.Fatalf("%s: the failed notice renders nothing", id)
		}
		return rs[0].Text
	}

	// Two slices of mig-01 taken, a third request waits.
	k.ask("erik@kaskade.example", 1, "notebook", "jupyterlab", 4*time.Hour)
	k.runPod("qm-fjord", "qm-l-1-jupyterlab", "mig-01", k.clock.Now())
	b := k.ask("astrid@kaskade.example", 1, "notebook", "", 4*time.Hour)
	c := k.ask("astrid@kaskade.example", 1, "notebook", "", 2*time.Hour)
	if c.State != qm.Queued {
		t.Fatalf("third lease %s %q, want queued", c.State, c.Reason)
	}

	// c is started from the queue once b fails, and the API server refuses its Job.
	k.cs.PrependReactor("create", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "qm-l-3-ssh-shell",
			errors.New("admission webhook \"vakt.kaskade.se\" denied the request: notebooks may not run past 18:00"))
	})
	// The pod of b: a LimitRange refuses it.
	k.world.failedCreate("qm-fjord", "qm-l-2-ssh-shell", `Error creating: pods "qm-l-2-ssh-shell-q8v4d" is forbidden: maximum memory usage per Container is 24Gi, but limit is 48Gi`)
	k.clock.Advance(time.Minute)
	k.pass()
	if got := k.lease(b.ID); got.State != qm.Failed {
		t.Fatalf("lease %s %s %q, want failed", b.ID, got.State, got.Reason)
	}
	pod := failedNotice(b.ID)

	if got := k.lease(c.ID); got.State != qm.Failed {
		t.Fatalf("lease %s %s %q, want failed", c.ID, got.State, got.Reason)
	}
	job := failedNotice(c.ID)

	for _, n := range []struct{ what, text, words string }{
		{"pod refused", pod, "maximum memory usage per Container is 24Gi"},
		{"job refused", job, "notebooks may not run past 18:00"},
	} {
		for _, want := range []string{n.words, "the cluster refused", "nothing was billed", "send this message to your platform admins"} {
			if !strings.Contains(n.text, want) {
				t.Errorf("%s: the owner reads %q, which does not say %q", n.what, n.text, want)
			}
		}
	}
}
