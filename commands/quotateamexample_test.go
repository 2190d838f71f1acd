package commands

import (
	"strings"
	"testing"
)

// A refusal for want of quota of the asker's second team shows the quota request for that team:
// a quota request that names no team is for the asker's first.
func TestAQuotaRefusalOfASecondTeamAsksForThatTeamsQuota(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, kolkataPolicy,
		"{user: bo@kestrel.example, groups: [grp-geno, pii-cleared]}", "{user: bo@kestrel.example, groups: [grp-geno, pii-cleared, grp-nlp]}",
		"  - name: quota\n    when: usage.gpus_in_use", "  - name: quota\n    when: false && usage.gpus_in_use"))
	for range 2 {
		mustOK(t, h.say("bo@kestrel.example", "/gpu request 1 a6000-2x for 1h team nlp")) // nlp may hold 2
	}
	r := h.say("bo@kestrel.example", "/gpu request 1 a6000-2x for 1h team nlp")
	ex := exampleIn(t, r)
	if !strings.HasPrefix(ex, "/gpu quota request +1 a6000-2x team nlp because ") {
		t.Fatalf("refusal %q, want its example to ask for team nlp's quota", r.Text)
	}
	q := mustOK(t, h.say("bo@kestrel.example", ex))
	if !strings.Contains(q.Text, "for team nlp") {
		t.Errorf("%s: %q, want a quota request for nlp", ex, q.Text)
	}
	// For the first team the example names none.
	for range 4 {
		mustOK(t, h.say("ayu@kestrel.example", "/gpu request 1 a6000-2x for 1h")) // genomics-2 may hold 4
	}
	if ex := exampleIn(t, h.say("bo@kestrel.example", "/gpu request 1 a6000-2x for 1h")); strings.Contains(ex, "team") {
		t.Errorf("the first team's example %q names a team", ex)
	}
}
