package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// A lease whose end passed while nothing ticked (the service was down, or the tick has not come
// round yet) is over at its end: releasing it afterwards does not bill the time past its end.
func TestAReleaseAfterTheEndIsNotBilledPastIt(t *testing.T) {
	h := newHarness(t)
	id := leaseIn(t, mustOK(t, h.say("alice@acme.example", "/gpu request 1 interactive for 2h")).Text)
	end := h.lease(id).ExpiresAt
	h.clock.Set(end.Add(3 * time.Hour)) // no tick: the service was down over the end
	r := h.say("alice@acme.example", "/gpu release "+id.String())
	l := h.lease(id)
	if !l.EndedAt.Equal(end) {
		t.Fatalf("%s is %s, ended %v; want ended at its end %v (reply: %s)", id, l.State, l.EndedAt, end, r.PlainText())
	}
	if strings.Contains(r.PlainText(), "5.00 GPU-hours") {
		t.Errorf("the reply bills the time past the end: %s", r.PlainText())
	}
}

// An idle lease whose grace ran out while nothing ticked is reclaimed then: a Keep pressed
// afterwards does not bring it back.
func TestAKeepAfterTheGraceRanOutDoesNotKeep(t *testing.T) {
	h := newHarness(t)
	id := leaseIn(t, mustOK(t, h.say("alice@acme.example", "/gpu request 1 interactive for 4h")).Text)
	h.sim.SetUtilization(h.lease(id), 0)
	h.advance(31 * time.Minute) // warned at 30m
	warned := h.lease(id).WarnedAt
	if warned.IsZero() {
		t.Fatalf("%s was not warned", id)
	}
	h.clock.Set(warned.Add(time.Hour)) // no tick: the grace (10m) ran out while the service was down
	r := h.say("alice@acme.example", "/gpu keep "+id.String())
	l := h.lease(id)
	if l.State != qm.Reclaimed || !l.EndedAt.Equal(warned.Add(10*time.Minute)) {
		t.Fatalf("%s is %s ended %v after a late keep (reply: %s); want reclaimed at %v", id, l.State, l.EndedAt, r.PlainText(), warned.Add(10*time.Minute))
	}
}

// A request whose approval timed out while nothing ticked is denied as of the timeout: an
// approval clicked afterwards does not grant it.
func TestAnApprovalAfterTheTimeoutDoesNotGrant(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	id := leaseIn(t, h.say("rita@borealis.example", "/gpu request 3 dev for 1h").Text)
	created := h.lease(id).CreatedAt
	h.clock.Set(created.Add(13 * time.Hour)) // the timeout is 12h; no tick
	var approver string
	for _, o := range h.svc.Deciders(h.lease(id).Team, "rita@borealis.example") {
		approver = o
	}
	r := h.say(approver, "/gpu approve "+id.String())
	l := h.lease(id)
	if l.State != qm.Denied || !l.DecidedAt.Equal(created.Add(12*time.Hour)) {
		t.Fatalf("%s is %s decided %v by %s after a late approval (reply: %s); want denied at the timeout", id, l.State, l.DecidedAt, l.DecidedBy, r.PlainText())
	}
}

// A lease whose end passed while nothing ticked is not brought back by an extension asked for
// afterwards.
func TestAnExtensionAfterTheEndDoesNotRevive(t *testing.T) {
	h := newHarness(t)
	id := leaseIn(t, mustOK(t, h.say("alice@acme.example", "/gpu request 1 interactive for 2h")).Text)
	end := h.lease(id).ExpiresAt
	h.clock.Set(end.Add(30 * time.Minute)) // no tick
	r := h.say("alice@acme.example", "/gpu extend "+id.String()+" 2h")
	l := h.lease(id)
	if l.State != qm.Expired || !l.EndedAt.Equal(end) {
		t.Fatalf("%s is %s, ends %v after a late extension (reply: %s); want expired at %v", id, l.State, l.ExpiresAt, r.PlainText(), end)
	}
}

// An extension approved after its lease's end passed while nothing ticked does not bring the
// lease back: the lease expired at its end, and the extension is withdrawn.
func TestAnExtensionApprovedAfterTheLeasesEndDoesNotRevive(t *testing.T) {
	h := newLabHarness(t)
	id := leaseIn(t, mustOK(t, h.say("anna@lab.example", "/gpu request 1 notebook for 2h")).Text)
	ext := extensionIn(t, mustOK(t, h.say("anna@lab.example", "/gpu extend "+id.String()+" 1h")).Text)
	if ext == id {
		t.Fatalf("extension beyond 2h did not wait for approval")
	}
	end := h.lease(id).ExpiresAt
	h.clock.Set(end.Add(30 * time.Minute)) // no tick: the service was down over the end
	r := h.say("jürgen@lab.example", "/gpu approve "+ext.String())
	l := h.lease(id)
	if l.State != qm.Expired || !l.EndedAt.Equal(end) || l.Duration != 2*time.Hour {
		t.Fatalf("%s is %s for %s, ended %v, after its extension %s was approved late (reply: %s); want expired at %v", id, l.State, l.Duration, l.EndedAt, ext, r.PlainText(), end)
	}
	if !r.Error || !strings.HasPrefix(r.Text, ext.String()+" was withdrawn ("+id.String()+" expired before a budget owner decided)") {
		t.Errorf("the approver was told %q", r.Text)
	}
}
