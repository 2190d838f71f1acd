package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
)

// The message that granted a workspace offers Extend and Release while it runs; once the lease
// has ended (released, expired, reclaimed) those buttons would only be refused, so its owner's
// copies of the grant are edited to say how it ended, without buttons, and nothing new is
// posted for it.
func TestAGrantLosesItsButtonsOnceItsLeaseEnds(t *testing.T) {
	h := newWarnHarness(t)
	edits := idleEditsOf(h)

	// checkGrantEdit checks that edit is of the grant of id, says want, and has no buttons.
	checkGrantEdit := func(how string, edit *bot.Reply, id, want string) {
		t.Helper()
		if edit == nil {
			t.Fatalf("%s: the grant of %s was not edited", how, id)
		}
		if edit.Ref != "granted:"+id || edit.To != udo || !edit.Update || !edit.EditOnly {
			t.Errorf("%s: the edit %+v is not of %s's grant held by %s", how, edit, id, udo)
		}
		if len(edit.Actions) != 0 || !strings.Contains(edit.Text, id+" "+want) {
			t.Errorf("%s: the grant now reads %q with buttons %v; want %q, without buttons", how, edit.Text, edit.Actions, id+" "+want)
		}
	}

	// Released with /gpu release (or its button).
	granted := mustOK(t, h.say(udo, "/gpu request 1 scratch for 2h"))
	id := leaseIn(t, granted.Text).String()
	if granted.Ref != "granted:"+id || len(granted.Actions) == 0 {
		t.Fatalf("the grant: ref %q, buttons %+v", granted.Ref, granted.Actions)
	}
	h.notices(udo)
	mustOK(t, h.say(udo, "/gpu release "+id))
	var got *bot.Reply
	for got == nil {
		if e := nextEdit(t, edits, "release: the grant of "+id); e.Ref == "granted:"+id {
			got = &e
		}
	}
	checkGrantEdit("released", got, id, "was released at")

	// Expired at its end: the edit comes with the notice that says so.
	id = leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 1h")).Text).String()
	h.notices(udo)
	h.advance(70 * time.Minute)
	got = nil
	for _, n := range h.notices(udo) {
		if n.Update && n.Ref == "granted:"+id {
			got = &n
		} else if !n.Update && n.Ref == "granted:"+id {
			t.Errorf("a new grant was posted for the expired %s: %q", id, n.Text)
		}
	}
	checkGrantEdit("expired", got, id, "expired at")
}
