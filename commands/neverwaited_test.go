package commands

import (
	"strings"
	"testing"
)

// An approver who approves or denies a lease that was granted at once is told it did not need
// a decision, not that it no longer waits for one: it never did.
func TestDecidingALeaseThatNeverWaitedSaysItNeededNoDecision(t *testing.T) {
	for _, tc := range []struct{ policy, user, approver, ask string }{
		{"../docs/quartermaster.example.yaml", "alice@acme.example", "dana@acme.example", "/gpu request 1 interactive for 1h"},
		{noRulesPolicy, "amy@tiny.example", "zoe@tiny.example", "/gpu request 1 l4 for 30m"},
	} {
		t.Run(tc.ask, func(t *testing.T) {
			h := templatesOn(t, tc.policy)
			id := leaseIn(t, mustOK(t, h.say(tc.user, tc.ask)).Text).String()
			for _, verb := range []string{"approve", "deny"} {
				r := h.say(tc.approver, "/gpu "+verb+" "+id)
				if !r.Error || !strings.HasPrefix(r.Text, id+" is active; it did not need a decision.") {
					t.Errorf("/gpu %s %s by %s: %q, want it to say %s did not need a decision", verb, id, tc.approver, r.Text, id)
				}
			}
		})
	}
}
