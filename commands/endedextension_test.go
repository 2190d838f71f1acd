package commands

import (
	"strings"
	"testing"
)

// /gpu cancel of an approved extension whose lease has since ended says that lease has already
// ended and points at its status, not at releasing a lease that is over.
func TestCancelOfExtensionOfEndedLeaseSaysItEnded(t *testing.T) {
	h := newHarnessOn(t, "testdata/tokyo.yaml")
	const haru, kenji = "haru@sakura.example", "kenji@sakura.example"
	run := leaseIn(t, mustOK(t, h.say(haru, "/gpu request 1 jupyter for 5h")).Text)
	ask := mustOK(t, h.say(haru, "/gpu extend "+run.String()+" 5h")) // past jupyter's 6h
	if !strings.Contains(ask.Text, "waits for approval") {
		t.Fatalf("extend past the class's limit: %q", ask.Text)
	}
	ext := leaseIn(t, ask.Text[strings.Index(ask.Text, " as ")+4:])
	mustOK(t, h.say(kenji, "/gpu approve "+ext.String()))

	// While the lease runs, the refusal says how to end it.
	r := h.say(haru, "/gpu cancel "+ext.String())
	if !r.Error || !strings.Contains(r.Text, "/gpu release "+run.String()) {
		t.Errorf("cancel of an extension in effect answered %q", r.Text)
	}

	mustOK(t, h.say(haru, "/gpu release "+run.String()))
	r = h.say(haru, "/gpu cancel "+ext.String())
	if !r.Error || !strings.Contains(r.Text, run.String()+", which has already ended") ||
		!strings.Contains(r.Text, "/gpu status "+run.String()) || strings.Contains(r.Text, "/gpu release") || strings.Contains(r.Text, "release it") {
		t.Errorf("cancel of an extension of an ended lease answered %q; want it to say %s has ended and show /gpu status %s", r.Text, run, run)
	}
}
