package commands

import (
	"strings"
	"testing"
)

// A request for a class of which the team has no quota, where no rule sends it to a budget owner,
// is refused saying the team has no quota of that class, not that it "may hold 0 GPUs at once and
// holds 0"; the example, the quota request that would make room, works typed back.
func TestARequestWithoutQuotaOfItsClassIsRefusedSayingSo(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, "testdata/harbor.yaml",
		"  - name: over-budget\n    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name] || usage.gpu_hours_week + request.gpu_hours > team.quota.gpu_hours_per_week\n    why: Past the team's quota\n", ""))
	const mere = "mere@harbor.example"
	r := h.say(mere, "/gpu request 2 rack for 1h")
	if !r.Error || !strings.Contains(r.Text, "Team kelp has no quota of rack GPUs") || strings.Contains(r.Text, "may hold 0") || strings.Contains(r.Text, "holds 0") {
		t.Errorf("a request of rack GPUs by team kelp, which has no quota of them: %q", r.Text)
	}
	refusedWithAWorkingExample(t, h, mere, "/gpu request 2 rack for 1h", "no quota of rack GPUs")
}
