package commands

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// TestAQueuedLeaseOfSomeoneWhoLeftTheTeamIsCancelled: a lease queued in the scheduler (its Job
// submitted, Kubernetes cannot place it yet) of someone taken out of the team's group at the
// identity provider would start later for a team they left: the re-check cancels it as it
// withdraws a waiting request, its Job is deleted through the backend's release path, and they
// and the budget owner are told; a lease that runs is left alone.
func TestAQueuedLeaseOfSomeoneWhoLeftTheTeamIsCancelled(t *testing.T) {
	ctx := context.Background()
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", append(borealisNodes(), borealisClaims()...)...)
	k.reconcile()
	const pim, sam, ns = "pim@borealis.example", "sam@borealis.example", "qm-speech"
	running := leaseIn(t, mustOK(t, k.say(pim, "/gpu request 1 slice 1h")).Text)
	queued := leaseIn(t, mustOK(t, k.say(pim, "/gpu request 1 slice 1h")).Text)
	l, _ := k.svc.Get(ctx, queued)
	job := l.Ref[strings.LastIndex(l.Ref, "/")+1:]
	k.addPod(ns, job, job+"-a", podUnschedulable("0/3 nodes are available: 1 Insufficient nvidia.com/mig-2g.20gb."))
	k.reconcile()
	if l, _ = k.svc.Get(ctx, queued); l.State != qm.Queued {
		t.Fatalf("%s is %s; want queued in the scheduler", queued, l.State)
	}
	k.notices(pim)

	before := &qm.AccountLink{Account: qm.Account{Platform: "slack", Workspace: "T1", User: "U1"}, Email: pim, Groups: []string{"g-speech"}}
	after := *before
	after.Groups = []string{"g-other"}
	for _, r := range k.bot.GroupsChanged(ctx, before, &after) {
		k.mu.Lock()
		k.sent = append(k.sent, r)
		k.mu.Unlock()
	}
	if l, _ = k.svc.Get(ctx, queued); l.State != qm.Cancelled {
		t.Errorf("the queued lease of someone who left the team is %s; want cancelled", l.State)
	}
	if _, err := k.cs.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{}); err == nil {
		t.Errorf("its Job %s/%s is still in the scheduler's queue", ns, job)
	}
	if l, _ := k.svc.Get(ctx, running); l.State == qm.Cancelled || l.State.Ended() {
		t.Errorf("the running lease %s was ended: %s", running, l.State)
	}
	for _, who := range []string{pim, sam} {
		var text string
		for _, n := range k.notices(who) {
			text += n.Text + "\n"
		}
		if !strings.Contains(text, queued.String()) || !strings.Contains(text, "cancelled") || strings.Contains(text, "run to their end: "+queued.String()) {
			t.Errorf("%s is told %q; want %s named as cancelled", who, text, queued)
		}
	}
}

// revokedSignIns is the policy's directory with single sign-on's view of who is signed in: the
// people in out have had their sign-in revoked, so it knows neither them nor their groups.
type revokedSignIns struct {
	*policy.Policy
	out map[string]bool
}

func (d revokedSignIns) Groups(ctx context.Context, user string) ([]string, bool) {
	if d.out[qm.CanonicalUser(user)] {
		return nil, false
	}
	return d.Policy.Groups(ctx, user)
}

func (d revokedSignIns) SignedIn(_ context.Context, user string) bool {
	return !d.out[qm.CanonicalUser(user)]
}

// TestAQueuedJobOfARevokedRequesterIsCancelled: a lease whose job waits in the scheduler's own
// queue (Kubernetes cannot place it yet) would be started by the scheduler, not the service,
// once room frees; when its requester's sign-in is revoked at the identity provider it cannot
// wait for them as a lease the service queues does, so it is cancelled and its Job deleted, and
// they and the budget owner are told so, not that it runs to its end.
func TestAQueuedJobOfARevokedRequesterIsCancelled(t *testing.T) {
	ctx := context.Background()
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", append(borealisNodes(), borealisClaims()...)...)
	k.reconcile()
	const pim, sam, ns = "pim@borealis.example", "sam@borealis.example", "qm-speech"
	running := leaseIn(t, mustOK(t, k.say(pim, "/gpu request 1 slice 1h")).Text)
	queued := leaseIn(t, mustOK(t, k.say(pim, "/gpu request 1 slice 1h")).Text)
	l, _ := k.svc.Get(ctx, queued)
	job := l.Ref[strings.LastIndex(l.Ref, "/")+1:]
	k.addPod(ns, job, job+"-a", podUnschedulable("0/3 nodes are available: 1 Insufficient nvidia.com/mig-2g.20gb."))
	k.reconcile()
	if l, _ = k.svc.Get(ctx, queued); l.State != qm.Queued {
		t.Fatalf("%s is %s; want queued in the scheduler", queued, l.State)
	}
	k.notices(pim)

	before := &qm.AccountLink{Account: qm.Account{Platform: "slack", Workspace: "T1", User: "U1"}, Email: pim, Groups: []string{"g-speech"}}
	k.svc.Directory = revokedSignIns{Policy: k.svc.Policy, out: map[string]bool{pim: true}}
	for _, r := range k.bot.GroupsChanged(ctx, before, nil) {
		k.mu.Lock()
		k.sent = append(k.sent, r)
		k.mu.Unlock()
	}
	if l, _ = k.svc.Get(ctx, queued); l.State != qm.Cancelled {
		t.Errorf("the scheduler-queued lease of a revoked requester is %s; want cancelled", l.State)
	}
	if _, err := k.cs.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{}); err == nil {
		t.Errorf("its Job %s/%s is still in the scheduler's queue", ns, job)
	}
	if l, _ := k.svc.Get(ctx, running); l.State.Ended() {
		t.Errorf("the running lease %s was ended: %s", running, l.State)
	}
	for _, who := range []string{pim, sam} {
		var text string
		for _, n := range k.notices(who) {
			text += n.Text + "\n"
		}
		if !strings.Contains(text, "was cancelled: "+queued.String()) || strings.Contains(text, "run to their end: "+queued.String()) || strings.Contains(text, "runs to its end: "+queued.String()) {
			t.Errorf("%s is told %q; want %s named as cancelled", who, text, queued)
		}
	}
}
