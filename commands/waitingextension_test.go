package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
)

func hasExtend(as []bot.Action) bool {
	for _, a := range as {
		if strings.HasPrefix(a.Label, "Extend") || strings.HasPrefix(a.Command, "/gpu extend") {
			return true
		}
	}
	return false
}

// While an extension of a lease waits for a budget owner, the lease's messages offer no Extend
// button and say who decides; an Extend button of an older message answers that the extension
// already waits, naming the approvers; once that extension is denied, Extend is offered again.
func TestNoExtendButtonWhileAnExtensionWaits(t *testing.T) {
	h := newWarnHarness(t)
	const greta = "greta@kestrel.example"
	id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 5h30m")).Text).String()
	if st := h.say(udo, "/gpu status "+id); !hasExtend(st.Actions) {
		t.Fatalf("a running lease's status offers no Extend: %+v", st.Actions)
	}
	ask := mustOK(t, h.say(udo, "/gpu extend "+id+" 1h"))
	if !strings.Contains(ask.Text, "waits for approval") {
		t.Fatalf("extend past the class's limit: %q", ask.Text)
	}
	ext := leaseIn(t, ask.Text[strings.Index(ask.Text, " as ")+4:]).String()

	st := h.say(udo, "/gpu status "+id)
	if hasExtend(st.Actions) {
		t.Errorf("status offers Extend while %s waits: %+v", ext, st.Actions)
	}
	if !strings.Contains(st.Text, ext) || !strings.Contains(st.Text, greta) {
		t.Errorf("status does not say that %s waits for %s: %q", ext, greta, st.Text)
	}

	rs := h.bot.Handle(context.Background(), bot.Request{User: udo, Text: "/gpu extend " + id + " 1h", Click: true})
	if len(rs) != 1 || !strings.Contains(rs[0].Text, "An extension of "+id+" (") || !strings.Contains(rs[0].Text, "more) is already waiting for approval by "+greta) {
		t.Errorf("the Extend button of an older message: %q", texts(rs))
	}

	h.advance(5*time.Hour + 10*time.Minute)
	warned := expiryWarnings(h.notices(udo))
	if len(warned) != 1 || hasExtend(warned[0].Actions) || !strings.Contains(warned[0].Text, "already waiting for approval by "+greta) {
		t.Errorf("the expiry warning while %s waits: %q %+v", ext, texts(warned), warned)
	}

	mustOK(t, h.say(greta, "/gpu deny "+ext+" not this week"))
	if st := h.say(udo, "/gpu status "+id); !hasExtend(st.Actions) {
		t.Errorf("after %s was denied, status offers no Extend: %+v", ext, st.Actions)
	}
}

// editsOf are the edits among rs, by the Ref of the messages they edit.
func editsOf(rs []bot.Reply) map[string]bot.Reply {
	out := map[string]bot.Reply{}
	for _, r := range rs {
		if r.Update && r.EditOnly {
			out[r.Ref] = r
		}
	}
	return out
}

// The messages of a lease that offer Extend (the grant, the expiry warning) are named so that
// they can be edited, and follow the extension that waits: when one is asked they lose Extend
// and say who decides it; once it is denied, withdrawn or approved, they offer Extend again,
// as the lease stands then. Each change edits them (only the owner's copies; nothing new is
// posted), and nobody else's messages.
func TestLeaseMessagesFollowAWaitingExtension(t *testing.T) {
	h := newWarnHarness(t)
	const greta = "greta@kestrel.example"
	granted := mustOK(t, h.say(udo, "/gpu request 1 scratch for 5h"))
	id := leaseIn(t, granted.Text).String()
	if granted.Ref != "granted:"+id || !hasExtend(granted.Actions) {
		t.Fatalf("the grant: ref %q, buttons %+v", granted.Ref, granted.Actions)
	}
	h.advance(4*time.Hour + 40*time.Minute)
	warned := expiryWarnings(h.notices(udo))
	if len(warned) != 1 || warned[0].Ref != "expiring:"+id || !hasExtend(warned[0].Actions) {
		t.Fatalf("the expiry warning: %+v", warned)
	}
	refs := []string{"granted:" + id, "expiring:" + id}

	// waiting asks for an extension past the class's 5h30m and checks the edits it makes.
	waiting := func() string {
		t.Helper()
		ask := mustOK(t, h.say(udo, "/gpu extend "+id+" 1h"))
		if !strings.Contains(ask.Text, "waits for approval") {
			t.Fatalf("extend past the class's limit: %q", ask.Text)
		}
		ext := leaseIn(t, ask.Text[strings.Index(ask.Text, " as ")+4:]).String()
		edits := editsOf(h.notices(udo))
		for _, ref := range refs {
			e, ok := edits[ref]
			if !ok || e.To != udo || hasExtend(e.Actions) || len(e.Actions) == 0 ||
				!strings.Contains(e.Text, "already waiting for approval by "+greta) || !strings.Contains(e.Text, ext) {
				t.Errorf("the edit of %s while %s waits: %+v", ref, ext, e)
			}
		}
		if len(edits) != len(refs) {
			t.Errorf("edits while %s waits: %+v", ext, edits)
		}
		return ext
	}
	// offered checks the edits that give Extend back once the extension is settled (how).
	offered := func(how string) map[string]bot.Reply {
		t.Helper()
		edits := editsOf(h.notices(udo))
		for _, ref := range refs {
			e, ok := edits[ref]
			if !ok || !hasExtend(e.Actions) || strings.Contains(e.Text, "already waiting") {
				t.Errorf("the edit of %s once the extension was %s: %+v", ref, how, e)
			}
		}
		return edits
	}

	ext := waiting()
	mustOK(t, h.say(greta, "/gpu deny "+ext+" not this week"))
	offered("denied")

	ext = waiting()
	mustOK(t, h.say(udo, "/gpu release "+ext))
	offered("withdrawn")

	ext = waiting()
	if got := h.notices(greta); len(editsOf(got)) != 0 {
		t.Errorf("greta's messages were edited: %+v", got)
	}
	mustOK(t, h.say(greta, "/gpu approve "+ext))
	edits := offered("approved")
	if l, _ := h.svc.Get(t.Context(), leaseIn(t, id)); !strings.Contains(edits["granted:"+id].Text, h.bot.when(l.ExpiresAt)) {
		t.Errorf("the grant once %s was approved does not say the new end %s: %q", ext, h.bot.when(l.ExpiresAt), edits["granted:"+id].Text)
	}
}
