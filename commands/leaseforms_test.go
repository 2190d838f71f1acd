package commands

import (
	"strings"
	"testing"
)

// A lease id written another way that names one lease all the same ("L1", "#1", "lease-1",
// "Lease1") is refused naming that lease in the example; before, the example named the asker's
// latest lease, so typing it back acted on a lease other than the one typed.
func TestALeaseIdWrittenAnotherWayKeepsItsLease(t *testing.T) {
	h := kelpOn(t)
	const who = "mara@kelp.example"
	first := leaseIn(t, h.say(who, "/gpu request 1 tidal for 1h").Text)
	leaseIn(t, h.say(who, "/gpu request 1 tidal for 2h").Text)
	id := first.String()
	n := strings.TrimPrefix(id, "L-")
	for _, typed := range []string{"L" + n, "#" + n, "lease-" + n, "Lease" + n, "l_" + n} {
		got := h.say(who, "/gpu release "+typed)
		msg, _, _ := strings.Cut(got.Text, " Example: ")
		if !got.Error || !strings.Contains(msg, "lease ids look like L-42: "+id+".") {
			t.Errorf("/gpu release %s answered %q; want it refused naming %s", typed, got.Text, id)
			continue
		}
		if ex := exampleOf(t, got.Text); ex != "release "+id {
			t.Errorf("/gpu release %s: example /gpu %s, want /gpu release %s", typed, ex, id)
		}
	}
	if st := h.say(who, "/gpu status "+id); !strings.Contains(st.PlainText(), "active") {
		t.Errorf("a refused command changed %s: %s", id, st.PlainText())
	}
}
