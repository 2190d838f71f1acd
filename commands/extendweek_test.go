package commands

import (
	"strings"
	"testing"
)

// TestAnExtensionWaitingForTheWeeksQuotaSaysItsNumbers: an extension that a rule on the quota
// (forge-quota: usage.gpu_hours_week + request.gpu_hours > team.quota.gpu_hours_per_week) sends
// to a budget owner told its requester only the rule, while the approvers' card said how far past
// the week's GPU-hours it goes. The requester reads the same numbers, and the extension that fits
// the week without a decision, once this one is withdrawn; typed so, it is granted at once.
func TestAnExtensionWaitingForTheWeeksQuotaSaysItsNumbers(t *testing.T) {
	h := newHarnessOn(t, himalPolicy)
	const nima = "nima@himal.example" // team yeti: 12 GPU-hours a week, no budget owner
	if r := mustOK(t, h.say(nima, "/gpu request 2 forge for 4h")); !strings.Contains(r.Text, "L-1 is active") {
		t.Fatalf("the lease: %q; want it granted", r.Text)
	}
	r := mustOK(t, h.say(nima, "/gpu extend L-1 3h"))
	for _, want := range []string{
		"waits for approval as L-2",
		"It would take team yeti to 14 of its 12 GPU-hours this week: 8 used or committed, and 6 for this request.",
		"An extension within the quota needs no decision: withdraw this one with /gpu cancel L-2, then /gpu extend L-1 2h.",
	} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("the extension's reply:\n%s\nwant %q", r.Text, want)
		}
	}
	mustOK(t, h.say(nima, "/gpu cancel L-2"))
	if r := mustOK(t, h.say(nima, "/gpu extend L-1 2h")); !strings.Contains(r.Text, "L-1 now runs until") {
		t.Errorf("the extension that fits: %q; want it granted at once", r.Text)
	}
}
