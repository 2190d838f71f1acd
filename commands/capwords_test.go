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

// /gpu policy says who decides the exceptions of a team without budget owners, and of teams the
// policy does not list: the fallback approvers, or nobody.
func TestPolicySaysWhoDecidesForATeamWithoutBudgetOwners(t *testing.T) {
	h := newHarnessOn(t, kolkataPolicy) // ops-team has no budget owners; fallback approvers are set
	p := mustOK(t, h.say("omar@kestrel.example", "/gpu policy")).PlainText()
	for _, want := range []string{"ops-team: 1 nb-t4 GPU and 1 mig-1g GPU at once, none in 2 other classes, 12 GPU-hours/week; no budget owners, so the fallback approvers decide",
		"any other team: 1 nb-t4 GPU and 1 mig-1g GPU at once, none in 2 other classes, 12 GPU-hours/week; the fallback approvers decide",
		"genomics-2: 3 nb-t4 GPUs, 4 a6000-2x GPUs, 12 h200-x6 GPUs and 6 mig-1g GPUs at once, 500 GPU-hours/week; budget owners: hana@kestrel.example, kenji@kestrel.example, the group geno-leads"} {
		if !strings.Contains(p, want) {
			t.Errorf("/gpu policy lacks %q:\n%s", want, p)
		}
	}
	h = newHarnessOn(t, policyVariant(t, kolkataPolicy, "fallback_approvers: [root-approvers, zoe@kestrel.example]", "fallback_approvers: []"))
	if p := mustOK(t, h.say("omar@kestrel.example", "/gpu policy")).PlainText(); !strings.Contains(p, "ops-team: 1 nb-t4 GPU and 1 mig-1g GPU at once, none in 2 other classes, 12 GPU-hours/week; no budget owners, so nobody decides its exceptions") {
		t.Errorf("without fallback approvers:\n%s", p)
	}
}
