package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// A running lease whose workload was lost and started again (its pod gone with its node, and a new
// one running): its owner reads what happened and why, that what was not saved is gone, where it
// runs now, when it ends and how to connect, with the lease's buttons.
func TestRestartedNoticeSaysWhatHappened(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	id := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 2h")).Text)
	l := h.lease(id)
	reason := "its workspace restarted: Kubernetes: its pod is gone (deleted, or lost with its node); a new pod runs on " + l.Node
	rs := h.bot.RenderNotice(context.Background(), qm.Notice{Kind: qm.NoticeRestarted, To: []string{l.User}, Lease: l, Reason: reason})
	if len(rs) != 1 {
		t.Fatalf("restarted notice: %+v", rs)
	}
	for _, want := range []string{id.String() + ": " + reason + ".", "not saved to storage is gone", "runs again on " + l.Node, "until Mon 30 Nov 18:00 CET (in 2h)"} {
		if !strings.Contains(rs[0].Text, want) {
			t.Errorf("restarted notice %q, want %q in it", rs[0].Text, want)
		}
	}
	if l.Connect != "" && !strings.Contains(rs[0].Text, "Connect: "+l.Connect) {
		t.Errorf("restarted notice %q, want how to connect (%s)", rs[0].Text, l.Connect)
	}
	if len(rs[0].Actions) == 0 {
		t.Errorf("restarted notice without the lease's buttons: %+v", rs[0])
	}
}
