package commands

import (
	"strings"
	"testing"
)

// A request written as the replies write a lease ("2 × a6000-2x") or as people write a count of
// cards ("2x a6000-2x", "2× nb-t4") asks for that many GPUs of the class.
func TestARequestReadsTimesAsTheRepliesWriteIt(t *testing.T) {
	h := newHarnessOn(t, kolkataPolicy)
	for line, want := range map[string]string{
		"/gpu request 2 × a6000-2x for 1h": "2 × a6000-2x",
		"/gpu request 2x a6000-2x for 1h":  "2 × a6000-2x",
		"/gpu request 1× nb-t4 1h":         "1 × nb-t4",
		"/gpu request 1X nb-t4 for 1h":     "1 × nb-t4",
	} {
		r := h.say("ayu@kestrel.example", line)
		if r.Error || !strings.Contains(r.Text, want) {
			t.Errorf("%s: %q, want %s", line, r.Text, want)
		}
	}
	// A class may end in x: a6000-2x stays the class.
	if r := h.say("ayu@kestrel.example", "/gpu request 1 a6000-2x for 1h"); r.Error {
		t.Errorf("a6000-2x: %q", r.Text)
	}
}
