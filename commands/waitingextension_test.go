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
	if len(rs) != 1 || !strings.Contains(rs[0].Text, "An extension of "+id+" is already waiting for approval by "+greta) {
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
