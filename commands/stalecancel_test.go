package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
)

// press runs a reply's button as an adapter does: its command, as a click.
func (h *harness) press(user string, a bot.Action) bot.Reply {
	h.t.Helper()
	rs := h.bot.Handle(context.Background(), bot.Request{User: user, Text: a.Command, Click: true, Key: "click:" + user + ":" + a.Command})
	if len(rs) == 0 {
		h.t.Fatalf("%s: button %q (%s) got no reply", user, a.Label, a.Command)
	}
	return rs[0]
}

func cancelButton(t *testing.T, r bot.Reply) bot.Action {
	t.Helper()
	for _, a := range r.Actions {
		if a.Label == "Cancel" {
			return a
		}
	}
	t.Fatalf("no Cancel button on %q: %+v", r.Text, r.Actions)
	return bot.Action{}
}

// A Cancel button pressed after the request was approved and its workspace started is refused:
// it says the lease runs and how to end it on purpose, and the workspace goes on.
func TestStaleCancelButtonLeavesARunningLeaseAlone(t *testing.T) {
	h := newHarnessOn(t, "testdata/orbit.yaml")
	r := h.say("kim@orbit.example", "/gpu request 1 duo for 20h") // longer than duo gives alone
	if r.Error || !strings.Contains(r.Text, "waits for approval") {
		t.Fatalf("request: %q", r.Text)
	}
	id := leaseIn(t, r.Text)
	cancel := cancelButton(t, r)
	if d := h.say("ria@orbit.example", "/gpu approve "+id.String()); d.Error {
		t.Fatalf("approve: %q", d.Text)
	}
	l, _ := h.svc.Get(context.Background(), id)
	if !l.State.Running() {
		t.Fatalf("approved lease is %s", l.State)
	}
	got := h.press("kim@orbit.example", cancel)
	if !got.Error || !strings.Contains(got.Text, "/gpu release "+id.String()) || !strings.Contains(got.Text, "runs") {
		t.Errorf("stale Cancel answered %q; want a refusal that says it runs and how to end it", got.Text)
	}
	l, _ = h.svc.Get(context.Background(), id)
	if !l.State.Running() || !h.sim.Running(l) {
		t.Fatalf("after a stale Cancel the lease is %s (running on the cluster: %v)", l.State, h.sim.Running(l))
	}
	// Typed, the same command refuses the same way; /gpu release ends it.
	if typed := h.say("kim@orbit.example", cancel.Command); !typed.Error || typed.Text != got.Text {
		t.Errorf("typed %q answered %q; the button %q", cancel.Command, typed.Text, got.Text)
	}
	if rel := h.say("kim@orbit.example", "/gpu release "+id.String()); rel.Error || !strings.Contains(rel.Text, "released") {
		t.Fatalf("typed release: %q", rel.Text)
	}
}

// A Cancel button on a request still waiting cancels it, and a queued lease's too.
func TestCancelButtonCancelsWhatWaits(t *testing.T) {
	h := newHarnessOn(t, "testdata/orbit.yaml")
	r := h.say("kim@orbit.example", "/gpu request 1 duo for 20h")
	id := leaseIn(t, r.Text)
	got := h.press("kim@orbit.example", cancelButton(t, r))
	if got.Error || !strings.Contains(got.Text, id.String()+" is cancelled") {
		t.Fatalf("Cancel on a waiting request: %q", got.Text)
	}
	if l, _ := h.svc.Get(context.Background(), id); l.State != qm.Cancelled {
		t.Fatalf("lease is %s", l.State)
	}
	// A queued lease's Cancel cancels it while it waits; pressed after it started, it is refused.
	var first qm.LeaseID
	for i := 0; i < 4; i++ { // the four A100 nodes
		r := mustOK(t, h.say("kim@orbit.example", "/gpu request 4 quad for 2h"))
		if i == 0 {
			first = leaseIn(t, r.Text)
		}
	}
	q1 := mustOK(t, h.say("kim@orbit.example", "/gpu request 4 quad for 2h"))
	q2 := mustOK(t, h.say("kim@orbit.example", "/gpu request 4 quad for 2h"))
	if !strings.Contains(q1.Text, "queued") || !strings.Contains(q2.Text, "queued") {
		t.Fatalf("a full cluster: %q / %q", q1.Text, q2.Text)
	}
	q1id, q2id := leaseIn(t, q1.Text), leaseIn(t, q2.Text)
	if got := h.press("kim@orbit.example", cancelButton(t, q2)); got.Error || !strings.Contains(got.Text, q2id.String()+" is cancelled") {
		t.Fatalf("Cancel on a queued lease: %q", got.Text)
	}
	mustOK(t, h.say("kim@orbit.example", "/gpu release "+first.String()))
	if l, _ := h.svc.Get(context.Background(), q1id); !l.State.Running() {
		t.Fatalf("the queued lease did not start when a node freed: %s", l.State)
	}
	if got := h.press("kim@orbit.example", cancelButton(t, q1)); !got.Error || !strings.Contains(got.Text, "/gpu release "+q1id.String()) {
		t.Errorf("Cancel on a queued lease that started since: %q", got.Text)
	}
	if l, _ := h.svc.Get(context.Background(), q1id); !l.State.Running() {
		t.Fatalf("a late Cancel ended the lease: %s", l.State)
	}
}
