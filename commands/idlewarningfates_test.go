package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
)

// Each idle warning of a lease is its own message: what became of it (busy again, extended,
// kept) is said on it alone, and when the lease ends each earlier warning keeps that and adds
// how the lease ended, while the one still open says how it ended.
func TestEachIdleWarningKeepsWhatBecameOfIt(t *testing.T) {
	h := newHarnessOn(t, egretPolicy)
	const nils = "nils@egret.example"
	edits := idleEditsOf(h)
	id := leaseIn(t, mustOK(t, h.say(nils, "/gpu request 1 kestrel for 6h")).Text)
	l, err := h.svc.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	h.notices(nils)
	warned := func(what string) bot.Reply {
		t.Helper()
		h.sim.SetUtilization(l, 0)
		for range 40 {
			h.advance(5 * time.Minute)
			for _, n := range h.notices(nils) {
				if !n.Update && strings.HasPrefix(n.Text, id.String()+" has shown no GPU activity") {
					return n
				}
			}
		}
		t.Fatalf("%s: %s was never warned of being idle", what, id)
		return bot.Reply{}
	}

	busy := warned("first")
	h.sim.SetUtilization(l, 80)
	h.advance(5 * time.Minute)
	var busyEdit *bot.Reply
	for _, n := range h.notices(nils) {
		if n.Update {
			busyEdit = &n
		}
	}
	if busyEdit == nil || busyEdit.Ref != busy.Ref || !strings.Contains(busyEdit.Text, "busy again") {
		t.Fatalf("the warning %q (%s) was edited as %+v when its lease was busy again", busy.Text, busy.Ref, busyEdit)
	}

	extended := warned("second")
	if r := mustOK(t, h.say(nils, "/gpu extend "+id.String()+" 1h")); !strings.Contains(r.Text, "now runs until") {
		t.Fatalf("the extension answered %q", r.Text)
	}
	kept := warned("third")
	mustOK(t, h.say(nils, "/gpu keep "+id.String()))
	if e := nextEdit(t, edits, "Keep"); e.Ref != kept.Ref || !strings.Contains(e.Text, "was kept at") {
		t.Errorf("Keep edited %+v; want the third warning (%s) to say it was kept", e, kept.Ref)
	}
	open := warned("fourth")
	if refs := map[string]bool{busy.Ref: true, extended.Ref: true, kept.Ref: true, open.Ref: true}; len(refs) != 4 {
		t.Fatalf("the four warnings share refs: %s %s %s %s", busy.Ref, extended.Ref, kept.Ref, open.Ref)
	}

	mustOK(t, h.say(nils, "/gpu release "+id.String()))
	got := map[string]string{}
	for range 5 { // the grant and the four warnings
		e := nextEdit(t, edits, "Release")
		got[e.Ref] = e.Text
		if len(e.Actions) != 0 {
			t.Errorf("the edit of %s keeps buttons %v", e.Ref, e.Actions)
		}
	}
	released := id.String() + " was released at"
	for _, c := range []struct{ ref, was string }{
		{busy.Ref, "was idle, then busy again"},
		{extended.Ref, "was not reclaimed after this idle warning: extended by 1h"},
		{kept.Ref, "was kept at"},
	} {
		if text := got[c.ref]; !strings.Contains(text, c.was) || !strings.Contains(text, "Later, "+released) {
			t.Errorf("the warning %s now reads %q; want it to say %q, then %q", c.ref, text, c.was, "Later, "+released)
		}
	}
	if text := got[open.Ref]; !strings.HasPrefix(text, released) || strings.Contains(text, "Later") {
		t.Errorf("the open warning %s now reads %q; want %q", open.Ref, text, released)
	}
}
