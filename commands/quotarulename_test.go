package commands

import (
	"strings"
	"testing"
)

// A published rule may be named quota, like the note added when a request would also take its
// team past its quota: /gpu approvals shows that rule's own why, as the approval message does.
func TestApprovalsShowTheWhyOfAPublishedRuleNamedQuota(t *testing.T) {
	h := newHarnessOn(t, kolkataPolicy) // rules too-many, then quota ("Beyond team quota"); nlp holds 2 nb-t4
	r := h.say("nia@kestrel.example", "/gpu request 3 nb-t4 for 1h")
	mustOK(t, r)
	if !strings.Contains(r.Text, "too-many") || !strings.Contains(r.Text, "quota (Beyond team quota)") {
		t.Fatalf("3 nb-t4 for nlp meets too-many and quota: %q", r.Text)
	}
	a := h.say("nlead@kestrel.example", "/gpu approvals")
	if len(a.Sections) != 1 {
		t.Fatalf("approvals: %q %v", a.Text, a.Sections)
	}
	got := a.Sections[0].Text
	if !strings.Contains(got, "quota: Beyond team quota") || strings.Contains(got, "It would also take") {
		t.Errorf("approvals list %q, want the published rule quota's why, Beyond team quota", got)
	}
}
