package commands

import (
	"strings"
	"testing"
	"time"
)

// The owner of a lease whose extension is denied, by a budget owner or by the approval timeout,
// is told that the lease goes on as it was, until its end.
func TestADeniedExtensionSaysTheLeaseRunsOnAsBefore(t *testing.T) {
	for _, byTimeout := range []bool{false, true} {
		h := newWarnHarness(t)
		const rita, olga = udo, "greta@kestrel.example"
		id := leaseIn(t, mustOK(t, h.say(rita, "/gpu request 1 scratch for 5h30m")).Text).String()
		ask := mustOK(t, h.say(rita, "/gpu extend "+id+" 1h"))
		if !strings.Contains(ask.Text, "waits for approval") {
			t.Fatalf("an extension past the class's limit: %q", ask.Text)
		}
		ext := leaseIn(t, ask.Text[strings.Index(ask.Text, " as ")+4:]).String()
		lease, err := h.svc.Get(t.Context(), leaseIn(t, id))
		if err != nil {
			t.Fatal(err)
		}
		if byTimeout {
			h.svc.Policy.Approvals.Timeout.Duration = time.Hour
			h.advance(61 * time.Minute)
		} else {
			mustOK(t, h.say(olga, "/gpu deny "+ext+" not this week"))
		}
		var told string
		for _, n := range h.notices(rita) {
			if strings.HasPrefix(n.Text, ext+" was denied") {
				told = n.Text
			}
		}
		want := id + " still runs until " + lease.ExpiresAt.In(h.svc.Policy.Location).Format("Mon 2 Jan 15:04 MST")
		if !strings.Contains(told, want) || !strings.HasSuffix(told, ", as before.") {
			t.Errorf("denied (by the timeout: %v), %s's owner was told %q; want it to say %q", byTimeout, ext, told, want)
		}
	}
}
