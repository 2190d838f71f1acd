package commands

import (
	"strings"
	"testing"
)

// A quota refusal on a class of whole nodes says why the GPUs asked for count as more: the whole
// nodes they take, and how many GPUs those hold against the quota.
func TestAQuotaRefusalOnWholeNodesSaysHowTheyCount(t *testing.T) {
	h := newHarnessOn(t, noRulesPolicy) // h100_sxm: exclusive, nodes of 8 GPUs; nlp-core may hold 16
	mustOK(t, h.say("amy@tiny.example", "/gpu request 8 h100_sxm for 1h"))
	r := h.say("amy@tiny.example", "/gpu request 9 h100_sxm for 1h")
	if !r.Error || !strings.Contains(r.Text, "asking for 9 takes 2 whole nodes of 8 GPUs = 16 GPUs against the quota") {
		t.Errorf("9 GPUs of whole nodes of 8 past the quota: %q, want it to say they take 2 nodes of 8 = 16 GPUs", r.Text)
	}
	if ex := exampleIn(t, r); !strings.HasPrefix(ex, "/gpu quota request +8 h100_sxm ") {
		t.Errorf("the example %q, want the 8 more GPUs it takes", ex)
	}
	mustOK(t, h.say("amy@tiny.example", "/gpu request 2 h100_sxm for 1h exclusive")) // 8 GPUs: 16 of 16 held
	r = h.say("amy@tiny.example", "/gpu request 1 h100_sxm for 1h exclusive")
	if !r.Error || !strings.Contains(r.Text, "asking for 1 takes 1 whole node of 8 GPUs = 8 GPUs against the quota") {
		t.Errorf("an exclusive request for 2 past the quota: %q", r.Text)
	}
}
