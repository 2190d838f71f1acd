package commands

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// A quota request whose reason is over the length limit is refused with the request as typed
// (its GPUs, class, length and team kept) and the reason's opening words, within the limit; typed
// back, that example asks for what was asked.
func TestAQuotaRequestWithTooLongAReasonKeepsWhatWasAsked(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	const rita = "rita@borealis.example"
	long := strings.TrimSpace(strings.Repeat("the poster session needs a second run of every ablation ", 10))
	if utf8.RuneCountInString(long) <= MaxReason {
		t.Fatalf("the reason is only %d characters", utf8.RuneCountInString(long))
	}
	refusal := h.say(rita, "/gpu quota request +2 dev for 1d because "+long)
	ex := exampleIn(t, refusal)
	want := "/gpu quota request +2 dev for 1d because the poster session"
	if !refusal.Error || !strings.Contains(refusal.Text, "characters long") || !strings.HasPrefix(ex, want) {
		t.Fatalf("a quota request with a reason of %d characters: %q; want an example starting %q", utf8.RuneCountInString(long), refusal.Text, want)
	}
	r := mustOK(t, h.say(rita, ex))
	l := h.lease(leaseIn(t, r.Text))
	if l.GPUs != 2 || l.Class != "dev" || l.Duration != 24*time.Hour || l.Because == "" || !strings.HasPrefix(long, strings.TrimSuffix(l.Because, "…")) {
		t.Errorf("the example %q asked for %d × %s for %s because %q", ex, l.GPUs, l.Class, l.Duration, l.Because)
	}
}
