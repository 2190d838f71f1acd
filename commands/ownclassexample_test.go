package commands

import (
	"strings"
	"testing"
)

// A refusal's example, and the request /gpu list suggests to someone with no leases, name a
// class the asker's team has GPUs in: on a policy whose default quota leaves out the first class
// of the catalog, someone in a team the policy does not list is shown the class they may use,
// and the example, typed as shown, is granted.
func TestExamplesNameAClassTheAskersTeamMayUse(t *testing.T) {
	p := policyVariant(t, noRulesPolicy,
		"default_quota: {gpus: {a100-80gb: 1, h100_sxm: 0, l4: 1}, gpu_hours_per_week: 10}",
		"default_quota: {gpus: {a100-80gb: 0, h100_sxm: 0, l4: 1}, gpu_hours_per_week: 10}")
	h := templatesOn(t, p)
	if r := mustOK(t, h.say("ned@tiny.example", "/gpu list")); !strings.Contains(r.Text, "/gpu request 1 l4 for 2h") {
		t.Errorf("/gpu list with no leases says %q; want it to suggest /gpu request 1 l4 for 2h", r.Text)
	}
	if r := mustOK(t, h.say("ned@tiny.example", "/gpu help request")).PlainText(); strings.Contains(r, "a100-80gb") || !strings.Contains(r, "/gpu request 1 l4 for 4h") {
		t.Errorf("/gpu help request for ned says\n%s\nwant examples of class l4", r)
	}
	for _, bad := range []string{"/gpu request 1 nope for 1h", "/gpu request 0", "/gpu request 1 l4 for 2x", "/gpu estimate 1", "/gpu request 1 h100_sxm for 1h"} {
		r := h.say("ned@tiny.example", bad)
		ex := exampleIn(t, r)
		if strings.Contains(ex, "a100-80gb") {
			t.Errorf("%s: the example %q names a class ned's team has no GPUs in", bad, ex)
			continue
		}
		if got := h.say("ned@tiny.example", ex); got.Error {
			t.Errorf("%s: the example %q is refused: %s", bad, ex, got.Text)
		} else if strings.HasPrefix(ex, "/gpu request") {
			h.say("ned@tiny.example", "/gpu release "+leaseIn(t, got.Text).String())
		}
	}
	// Someone whose team has GPUs in the first class still sees it.
	if ex := exampleIn(t, h.say("amy@tiny.example", "/gpu request 1 nope")); !strings.HasPrefix(ex, "/gpu request 1 a100-80gb for 30m") {
		t.Errorf("amy's example is %q; want /gpu request 1 a100-80gb for 30m", ex)
	}
}
