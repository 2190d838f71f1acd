package commands

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A denial whose reason is over the length limit is refused with an example that names the lease
// typed, with a reason within the limit, and that example, typed back, denies it.
func TestADenialWithTooLongAReasonShowsTheLeaseTyped(t *testing.T) {
	h := newHarnessOn(t, sydneyPolicy)
	u, a := "ravi@wattle.example", "priya@wattle.example"
	lease := leaseIn(t, mustOK(t, h.say(u, "/gpu request 1 notebook for 1h")).Text).String()
	r := mustOK(t, h.say(u, "/gpu extend "+lease+" 29d"))
	ext := leaseIn(t, strings.TrimPrefix(r.Text, "Extending "+lease)).String()

	long := strings.TrimSpace(strings.Repeat("the cluster is booked for the review ", 20))
	if utf8.RuneCountInString(long) <= MaxReason {
		t.Fatalf("the reason is only %d characters", utf8.RuneCountInString(long))
	}
	refusal := h.say(a, "/gpu deny "+ext+" "+long)
	ex := exampleIn(t, refusal)
	if !strings.Contains(refusal.Text, "characters long") || !strings.HasPrefix(ex, "/gpu deny "+ext+" ") {
		t.Fatalf("/gpu deny %s with a reason of %d characters: %q; want the example to deny %s", ext, utf8.RuneCountInString(long), refusal.Text, ext)
	}
	if n := utf8.RuneCountInString(strings.TrimPrefix(ex, "/gpu deny "+ext+" ")); n > MaxReason || n == 0 {
		t.Errorf("the example %q gives a reason of %d characters", ex, n)
	}
	if r := h.say(a, ex); r.Error {
		t.Errorf("the example %q, typed back by %s, is refused: %s", ex, a, r.Text)
	}
}
