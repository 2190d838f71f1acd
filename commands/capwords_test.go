package commands

import (
	"strings"
	"testing"
)

// A request queued by the capacity share names the class the share caps, as /gpu policy does,
// not "shared classes": a policy may have shared classes the share does not cap (a6000-2x here).
func TestAQueuedRequestNamesTheClassTheCapacityShareCaps(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, kolkataPolicy, "capacity_share: 0.25", "capacity_share: 0.1")) // 10% of 35 GPUs: 3
	for range 3 {
		mustOK(t, h.say("ayu@kestrel.example", "/gpu request 1 nb-t4 for 1h"))
	}
	r := mustOK(t, h.say("nia@kestrel.example", "/gpu request 1 nb-t4 for 1h"))
	if !strings.Contains(r.Text, "is queued: waiting: nb-t4 may hold 3 GPUs at once (its capacity share) and holds 3.") || strings.Contains(r.Text, "shared classes") {
		t.Errorf("queued under the cap: %q", r.Text)
	}
	if p := mustOK(t, h.say("nia@kestrel.example", "/gpu policy")).PlainText(); !strings.Contains(p, "nb-t4 holds at most 10% of the cluster's GPUs") {
		t.Errorf("the policy it points to: %q", p)
	}
}
