package commands

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
)

// A lease's buttons follow its state, whichever message shows it: the request's reply and
// /gpu status offer the same ones, and a request waiting for approval can be cancelled from
// its status as from its reply.
func TestStatusOffersTheButtonsOfTheReply(t *testing.T) {
	h := newHarnessOn(t, "testdata/orbit.yaml")
	const kim = "kim@orbit.example"
	same := func(what string, reply bot.Reply, id qm.LeaseID) qm.LeaseID {
		t.Helper()
		st := mustOK(t, h.say(kim, "/gpu status "+id.String()))
		if fmt.Sprint(st.Actions) != fmt.Sprint(reply.Actions) {
			t.Errorf("%s: the reply offers %+v, /gpu status %s offers %+v", what, reply.Actions, id, st.Actions)
		}
		return id
	}
	// Longer than the class gives: it waits for approval.
	waits := mustOK(t, h.say(kim, "/gpu request 1 duo for 20h"))
	id := same("a request waiting for approval", waits, leaseIn(t, waits.Text))
	st := mustOK(t, h.say(kim, "/gpu status "+id.String()))
	got := h.press(kim, cancelButton(t, st))
	if l, _ := h.svc.Get(context.Background(), id); got.Error || l.State != qm.Cancelled {
		t.Fatalf("Cancel on the status of a waiting request: %q; it is %s", got.Text, l.State)
	}
	// A quota increase waiting for approval.
	quota := mustOK(t, h.say(kim, "/gpu quota request +2 hex for 1d because a deadline"))
	same("a quota increase waiting for approval", quota, leaseIn(t, quota.Text))
	// An extension beyond the class's limit waiting for approval.
	run := leaseIn(t, mustOK(t, h.say(kim, "/gpu request 1 duo for 10h")).Text)
	ext := mustOK(t, h.say(kim, "/gpu extend "+run.String()+" 10h"))
	same("an extension waiting for approval", ext, leaseIn(t, ext.Text[strings.Index(ext.Text, " as ")+4:]))
}

// An extension or a quota increase in effect is no workspace: /gpu status of it offers neither
// Extend (only workspace leases can be extended) nor Release, which would end no workspace (the
// extension's lease runs on, extended). The lease it extends still offers both.
func TestStatusOfAnExceptionInEffectOffersNoLeaseButtons(t *testing.T) {
	h := newHarnessOn(t, "testdata/orbit.yaml")
	const kim, ria = "kim@orbit.example", "ria@orbit.example"
	run := leaseIn(t, mustOK(t, h.say(kim, "/gpu request 1 duo for 10h")).Text)
	ext := mustOK(t, h.say(kim, "/gpu extend "+run.String()+" 10h"))
	extID := leaseIn(t, ext.Text[strings.Index(ext.Text, " as ")+4:])
	quota := leaseIn(t, mustOK(t, h.say(kim, "/gpu quota request +2 hex for 1d because a deadline")).Text)
	for _, id := range []qm.LeaseID{extID, quota} {
		mustOK(t, h.say(ria, "/gpu approve "+id.String()))
		if l, _ := h.svc.Get(context.Background(), id); l.State != qm.Active {
			t.Fatalf("%s is %s after its approval", id, l.State)
		}
		st := mustOK(t, h.say(kim, "/gpu status "+id.String()))
		if len(st.Actions) != 0 {
			t.Errorf("/gpu status %s, in effect, offers %+v", id, st.Actions)
		}
	}
	st := mustOK(t, h.say(kim, "/gpu status "+run.String()))
	labels := fmt.Sprint(st.Actions)
	if !strings.Contains(labels, "/gpu extend "+run.String()) || !strings.Contains(labels, "/gpu release "+run.String()) {
		t.Errorf("/gpu status %s, extended, offers %+v", run, st.Actions)
	}
}
