package commands

import (
	"strings"
	"testing"
)

// /gpu approve of a lease about which nothing waits for a decision (one's own lease granted at
// once, a request withdrawn) says so, by whoever of the team tries, rather than who could
// decide it; its example works.
func TestApprovingWhatWaitsForNoDecisionSaysSo(t *testing.T) {
	const mere, rangi = "mere@harbor.example", "rangi@harbor.example"
	h := newHarnessOn(t, policyVariant(t, "testdata/harbor.yaml",
		"  - {user: mere@harbor.example, groups: [hr-kelp]}\n",
		"  - {user: mere@harbor.example, groups: [hr-kelp]}\n  - {user: rangi@harbor.example, groups: [hr-kelp]}\n"))
	active := leaseIn(t, mustOK(t, h.say(mere, "/gpu request 1 bench for 2h")).Text).String()
	asked := leaseIn(t, mustOK(t, h.say(mere, "/gpu request 3 bench for 2h")).Text).String()
	mustOK(t, h.say(mere, "/gpu cancel "+asked))
	for _, tc := range []struct{ who, id, verb string }{
		{mere, active, "approve"}, {mere, active, "deny"}, {rangi, active, "approve"},
		{rangi, asked, "approve"}, {mere, asked, "approve"},
	} {
		cmd := "/gpu " + tc.verb + " " + tc.id
		if tc.verb == "deny" {
			cmd += " not needed"
		}
		r := h.say(tc.who, cmd)
		if strings.Contains(r.Text, "can decide") || strings.Contains(r.Text, "decides") || !strings.Contains(r.Text, tc.id) ||
			!strings.Contains(r.Text, "waits for a decision") {
			t.Errorf("%s: /gpu %s %s says %q; want that nothing about it waits for a decision", tc.who, tc.verb, tc.id, r.Text)
		}
		ex := r.Text[strings.LastIndex(r.Text, "Example: ")+len("Example: "):]
		if !strings.Contains(r.Text, "Example: ") {
			t.Errorf("%s: /gpu %s %s gives no example: %q", tc.who, tc.verb, tc.id, r.Text)
			continue
		}
		mustOK(t, h.say(tc.who, ex))
	}
	// A request that still waits names who decides it, as before.
	waits := leaseIn(t, mustOK(t, h.say(mere, "/gpu request 3 bench for 2h")).Text).String()
	if r := h.say(rangi, "/gpu approve "+waits); !strings.Contains(r.Text, "can decide "+waits) {
		t.Errorf("a teammate approving %s, which waits, reads %q", waits, r.Text)
	}
}
