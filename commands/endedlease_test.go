package commands

import (
	"strings"
	"testing"
)

// Releasing or keeping a lease that has ended is refused with an example that works for it,
// /gpu status of that lease, not a made-up lease id.
func TestRefusalsOfAnEndedLeaseShowItsStatus(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	id := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 1h")).Text).String()
	mustOK(t, h.say("rita@borealis.example", "/gpu release "+id))
	for _, typed := range []string{"/gpu release " + id, "/gpu keep " + id} {
		r := h.say("rita@borealis.example", typed)
		if !r.Error || !strings.HasSuffix(r.Text, "Example: /gpu status "+id) {
			t.Errorf("%s got %q; want a refusal whose example is /gpu status %s", typed, r.Text, id)
		}
	}
	pending := leaseIn(t, h.say("rita@borealis.example", "/gpu request 7 dev for 1h").Text).String()
	if r := h.say("rita@borealis.example", "/gpu keep "+pending); !r.Error || !strings.HasSuffix(r.Text, "Example: /gpu status "+pending) {
		t.Errorf("keeping a waiting request got %q; want a refusal whose example is /gpu status %s", r.Text, pending)
	}
}
