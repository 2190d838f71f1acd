package commands

import (
	"strings"
	"testing"
)

// The requester of a request that passes only the team's weekly GPU-hours reads the numbers, as
// the budget owner's card gives them, and the request of the same GPUs that fits the week.
func TestTheRequesterReadsTheWeeklyNumbers(t *testing.T) {
	h := newHarnessOn(t, fjordPolicy(t, fjordBudget))
	const lea = "lea@fjord.example"
	mustOK(t, h.say(lea, "/gpu request 1 kiln for 8h"))
	r := mustOK(t, h.say(lea, "/gpu request 1 anvil for 6h"))
	const week = "It would take team glass to 14 of its 12 GPU-hours this week: 8 used or committed, and 6 for this request."
	const fits = "A request within the quota needs no decision: /gpu request 1 anvil for 4h."
	if !strings.Contains(r.Text, "waits for approval") || !strings.Contains(r.Text, week) || !strings.Contains(r.Text, fits) {
		t.Errorf("the requester's reply %q; want %q and %q", r.Text, week, fits)
	}
	if strings.Contains(r.Text, "anvil GPUs now") {
		t.Errorf("the reply %q speaks of GPUs at once, which the request stays within", r.Text)
	}
	// Two GPUs: the 4 GPU-hours left take 2 hours of them.
	if r := mustOK(t, h.say(lea, "/gpu request 2 anvil for 3h")); !strings.Contains(r.Text, "/gpu request 2 anvil for 2h.") {
		t.Errorf("the requester's reply %q; want a 2-GPU request of 2h as the example", r.Text)
	}
	// Three GPUs pass the 2 at once as well: both are said, and the example fits both.
	r = mustOK(t, h.say(lea, "/gpu request 3 anvil for 3h"))
	for _, want := range []string{"Team glass holds 0 of its 2 anvil GPUs now.", "It would take team glass to 17 of its 12 GPU-hours this week: 8 used or committed, and 9 for this request.", "needs no decision: /gpu request 2 anvil for 2h."} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("the requester's reply %q; want %q", r.Text, want)
		}
	}
	// The example needs no decision, and leaves no hour of the week: a larger quota is what
	// would do then.
	if r := mustOK(t, h.say(lea, strings.TrimSuffix(fits[strings.Index(fits, "/gpu"):], "."))); strings.Contains(r.Text, "waits for approval") {
		t.Errorf("the example waits for approval: %q", r.Text)
	}
	r = mustOK(t, h.say(lea, "/gpu request 1 anvil for 1h"))
	if !strings.Contains(r.Text, "It would take team glass to 13 of its 12 GPU-hours this week") || strings.Contains(r.Text, "needs no decision") || !strings.Contains(r.Text, "/gpu quota request") {
		t.Errorf("the requester's reply with the week spent: %q", r.Text)
	}
}
