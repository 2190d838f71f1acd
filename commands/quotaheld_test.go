package commands

import (
	"context"
	"strings"
	"testing"
)

// TestAnOverQuotaRequestSaysWhatTheTeamHolds: team speech may hold 2 slices and holds both, with
// one lease whose Job someone suspended. A request for one more goes to the budget owner under
// the quota rule; the reply also says what the team holds now, by which lease and in what state,
// and the quota request that would let such a request start without a decision.
func TestAnOverQuotaRequestSaysWhatTheTeamHolds(t *testing.T) {
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", append(borealisNodes(), borealisClaims()...)...)
	k.reconcile()
	const pim, ns = "pim@borealis.example", "qm-speech"
	id := leaseIn(t, k.say(pim, "/gpu request 2 slice 3h").Text)
	l, _ := k.svc.Get(context.Background(), id)
	job := l.Ref[strings.LastIndex(l.Ref, "/")+1:]
	k.addPod(ns, job, job+"-a", podRunsOn("mig-1", k.clock.Now()))
	k.reconcile()
	k.suspend(ns, job, job+"-a")
	k.reconcile()

	r := k.say(pim, "/gpu request 1 slice 1h")
	for _, want := range []string{"waits for approval", "quota", "holds 2 of its 2 slice", id.String() + " (2, suspended)", "/gpu quota request +1 slice"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("reply %q\nwant it to say %q", r.Text, want)
		}
	}
}

// TestAnOverQuotaRequestThatWaitsSaysWhatFits: team speech holds 1 of its 2 slices; a request
// for 2 waits for the budget owner under the quota rule, and its reply says what fits now.
func TestAnOverQuotaRequestThatWaitsSaysWhatFits(t *testing.T) {
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", append(borealisNodes(), borealisClaims()...)...)
	k.reconcile()
	const pim = "pim@borealis.example"
	id := leaseIn(t, k.say(pim, "/gpu request 1 slice 3h").Text)
	r := k.say(pim, "/gpu request 2 slice 1h")
	for _, want := range []string{"waits for approval", "holds 1 of its 2 slice", id.String() + " (1, ", "/gpu request 1 slice for 1h"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("reply %q\nwant it to say %q", r.Text, want)
		}
	}
}

// TestAnOverQuotaRequestWithRoomLeftSuggestsWhatFits: team nlp-core may hold 4 l4 GPUs and
// holds 2 (two leases running). Asking for 3 more is refused by the quota itself
// (the policy has no rule that sends it to a person): the refusal says what the team holds, by
// which leases, and gives as its example the request that fits, 2.
func TestAnOverQuotaRequestWithRoomLeftSuggestsWhatFits(t *testing.T) {
	h := newHarnessOn(t, "testdata/norules.yaml")
	const amy = "amy@tiny.example"
	a := leaseIn(t, mustOK(t, h.say(amy, "/gpu request 1 l4 4h")).Text)
	b := leaseIn(t, mustOK(t, h.say(amy, "/gpu request 1 l4 4h")).Text)
	r := h.say(amy, "/gpu request 3 l4 4h")
	if !r.Error {
		t.Fatalf("reply %q; want a refusal", r.Text)
	}
	for _, want := range []string{"holds 2", a.String() + " (1, running)", b.String() + " (1, running)", "/gpu request 2 l4 for 4h"} {
		if !strings.Contains(r.PlainText(), want) {
			t.Errorf("refusal %q\nwant it to say %q", r.PlainText(), want)
		}
	}
}
