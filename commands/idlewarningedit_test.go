package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
)

// idleEditsOf collects the edits the bot makes of posted messages outside notices (Edits).
func idleEditsOf(h *harness) <-chan bot.Reply {
	ch := make(chan bot.Reply, 16)
	h.bot.Edits = bot.SenderFunc(func(_ context.Context, r bot.Reply) error {
		ch <- r
		return nil
	})
	return ch
}

// nextEdit waits for the next edit, briefly.
func nextEdit(t *testing.T, ch <-chan bot.Reply, what string) bot.Reply {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: the idle warning was not edited", what)
		return bot.Reply{}
	}
}

// idleWarned runs the lease of mere idle until she is warned, and returns the warning.
func idleWarned(t *testing.T, h *harness, id string) bot.Reply {
	t.Helper()
	const mere = "mere@harbor.example"
	l, err := h.svc.Get(context.Background(), leaseIn(t, id))
	if err != nil {
		t.Fatal(err)
	}
	h.sim.SetUtilization(l, 0)
	for i := 0; i < 20; i++ {
		h.advance(5 * time.Minute)
		for _, n := range h.notices(mere) {
			if len(n.Actions) == 2 && n.Actions[0].Label == "Keep" {
				return n
			}
		}
	}
	t.Fatalf("%s was never warned of being idle", id)
	return bot.Reply{}
}

// checkEdited checks that edit is of warning's copies held by its owner: it says what happened
// and has no buttons left, and it posts nothing new.
func checkEdited(t *testing.T, what string, warning, edit bot.Reply, want string) {
	t.Helper()
	if warning.Ref == "" || edit.Ref != warning.Ref || edit.To != warning.To || !edit.Update || !edit.EditOnly {
		t.Errorf("%s: the edit %+v is not of the warning %+v", what, edit, warning)
	}
	if len(edit.Actions) != 0 || !strings.Contains(edit.Text, want) {
		t.Errorf("%s: the old warning now reads %q with buttons %v; want it to say %q, without buttons", what, edit.Text, edit.Actions, want)
	}
}

// An idle warning answered (Keep, Release) or overtaken (the lease reclaimed) is edited to say
// what happened and loses its Keep and Release buttons, so that it does not offer them still.
func TestAnOldIdleWarningSaysWhatHappenedAndLosesItsButtons(t *testing.T) {
	const mere = "mere@harbor.example"
	h := newHarnessOn(t, "testdata/harbor.yaml")
	edits := idleEditsOf(h)
	id := leaseIn(t, mustOK(t, h.say(mere, "/gpu request 1 bench for 8h")).Text).String()
	h.notices(mere)

	warning := idleWarned(t, h, id)
	mustOK(t, h.say(mere, "/gpu keep "+id))
	checkEdited(t, "Keep", warning, nextEdit(t, edits, "Keep"), id+" was kept")

	warning = idleWarned(t, h, id)
	mustOK(t, h.say(mere, "/gpu release "+id))
	edit := nextEdit(t, edits, "Release")
	if edit.Ref == "granted:"+id { // the grant loses its buttons too (endedgrant_test.go)
		edit = nextEdit(t, edits, "Release")
	}
	checkEdited(t, "Release", warning, edit, id+" was released")

	id = leaseIn(t, mustOK(t, h.say(mere, "/gpu request 1 bench for 8h")).Text).String()
	h.notices(mere)
	warning = idleWarned(t, h, id)
	h.advance(20 * time.Minute) // past the grace: reclaimed
	var reclaimed *bot.Reply
	for _, n := range h.notices(mere) {
		if n.Update && n.Ref == warning.Ref {
			reclaimed = &n
		}
	}
	if reclaimed == nil {
		t.Fatalf("the idle warning of %s was not edited when it was reclaimed", id)
	}
	checkEdited(t, "reclaimed", warning, *reclaimed, id+" was reclaimed")
}

// posted is rs less the edits of earlier messages: what arrives as new messages.
func posted(rs []bot.Reply) []bot.Reply {
	var out []bot.Reply
	for _, r := range rs {
		if !r.Update {
			out = append(out, r)
		}
	}
	return out
}

// editsIn is the edits of earlier messages among rs.
func editsIn(rs []bot.Reply) []bot.Reply {
	var out []bot.Reply
	for _, r := range rs {
		if r.Update {
			out = append(out, r)
		}
	}
	return out
}
