package commands

import (
	"context"
	"strings"
	"testing"
	"time"
)

// freeLine is the catalog's "Free now" line of class in a reply's plain text.
func freeLine(t *testing.T, text, class string) string {
	t.Helper()
	in := false
	for _, line := range strings.Split(text, "\n") {
		if title, ok := strings.CutPrefix(line, "• "); ok {
			in = strings.HasPrefix(title, class+" ") || title == class
		}
		if in && strings.Contains(line, "Free now:") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("the catalog has no Free now line for %s:\n%s", class, text)
	return ""
}

// While the scheduler does not answer, the catalog's free GPUs are what it said when it last
// answered: the catalog says so, and how long ago, rather than show them as if current. Once it
// answers again, they are current again.
func TestCatalogSaysItsFreeGPUsAreFromTheLastReadWhileTheSchedulerDoesNotAnswer(t *testing.T) {
	h, a := awayHarness(t, "testdata/harbor.yaml")
	const mere = "mere@harbor.example"
	id := leaseIn(t, h.say(mere, "/gpu request 1 bench for 2h").Text)
	if l, err := h.svc.Get(context.Background(), id); err != nil || !l.State.Running() {
		t.Fatalf("%s: %v %v; the test needs it running", id, l, err)
	}
	if got := freeLine(t, h.say(mere, "/gpu catalog").PlainText(), "bench"); got != "Free now: 7 of 8" {
		t.Fatalf("while the scheduler answers, the catalog says %q; the test needs \"Free now: 7 of 8\"", got)
	}
	a.set(true)
	h.clock.Advance(4 * time.Minute)
	if _, err := h.svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := freeLine(t, h.say(mere, "/gpu catalog").PlainText(), "bench")
	for _, want := range []string{"7 of 8", "as of", "4m ago", "does not answer"} {
		if !strings.Contains(got, want) {
			t.Errorf("with the scheduler silent since it was read 4 minutes ago, the catalog says %q; want it to say %q", got, want)
		}
	}
	a.set(false)
	h.clock.Advance(time.Minute)
	if _, err := h.svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := freeLine(t, h.say(mere, "/gpu catalog").PlainText(), "bench"); got != "Free now: 7 of 8" {
		t.Errorf("once the scheduler answers again, the catalog says %q; want \"Free now: 7 of 8\"", got)
	}
}
