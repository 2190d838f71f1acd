package commands

import (
	"strings"
	"testing"
)

const kolkataPolicy = "testdata/kolkata.yaml"

// An estimate for more GPUs than a node of the class holds quotes what the request would hold and
// be billed for: whole nodes, as /gpu request rounds it, not the GPUs typed.
func TestAnEstimateLargerThanANodeIsOfTheWholeNodesARequestGets(t *testing.T) {
	h := newHarnessOn(t, kolkataPolicy) // h200-x6: nodes of 6 GPUs at 1200 JPY per GPU-hour
	e := h.say("ayu@kestrel.example", "/gpu estimate 7 h200-x6 2h")
	mustOK(t, e)
	r := h.say("ayu@kestrel.example", "/gpu request 7 h200-x6 for 2h")
	mustOK(t, r)
	if !strings.Contains(r.Text, "Estimated cost 28800 JPY") {
		t.Fatalf("the request for 7 holds 2 nodes of 6: %q", r.Text)
	}
	if !strings.Contains(e.Text, "28800 JPY") || strings.Contains(e.Text, "16800") {
		t.Errorf("estimate %q, want the 28800 JPY the request is estimated at", e.Text)
	}
	if !strings.Contains(e.Text, "2 whole nodes of 6 GPUs = 12 GPUs") {
		t.Errorf("estimate %q, want it to say the 7 GPUs take 2 whole nodes of 6", e.Text)
	}
	if len(e.Actions) == 0 || e.Actions[0].Command != "/gpu request 7 h200-x6 for 2h" {
		t.Errorf("estimate's button %v, want the request as typed", e.Actions)
	}
	// Within a node nothing changes.
	if e := h.say("ayu@kestrel.example", "/gpu estimate 5 h200-x6 2h"); !strings.HasPrefix(e.Text, "5 × h200-x6 for 2h: 12000 JPY") {
		t.Errorf("estimate within a node: %q", e.Text)
	}
}

// A refusal of a class that is not in a catalog of four names all four: "and 1 more" would hide
// the one the user may have meant.
func TestAWrongClassNamesEveryClassOfAFourClassCatalog(t *testing.T) {
	h := newHarnessOn(t, kolkataPolicy)
	for _, line := range []string{"/gpu request 1 mig1 2h", "/gpu estimate 1 t4 2h"} {
		r := h.say("ayu@kestrel.example", line)
		if !r.Error {
			t.Fatalf("%s: %q, want a refusal", line, r.Text)
		}
		for _, c := range []string{"nb-t4", "a6000-2x", "h200-x6", "mig-1g"} {
			if !strings.Contains(r.Text, c) {
				t.Errorf("%s: %q does not name class %s", line, r.Text, c)
			}
		}
		if strings.Contains(r.Text, "1 more") {
			t.Errorf("%s: %q hides one class as \"1 more\"", line, r.Text)
		}
	}
}

// An exclusive estimate quotes the whole nodes an exclusive request holds, and its button asks
// for it exclusive: the price an approver would see.
func TestAnExclusiveEstimateQuotesTheWholeNodes(t *testing.T) {
	h := newHarnessOn(t, kolkataPolicy) // h200-x6: nodes of 6 GPUs at 1200 JPY per GPU-hour
	e := mustOK(t, h.say("ayu@kestrel.example", "/gpu estimate 2 h200-x6 2h exclusive"))
	if !strings.HasPrefix(e.Text, "2 × h200-x6 exclusive for 2h takes 1 whole node of 6 GPUs = 6 GPUs: 14400 JPY") {
		t.Errorf("exclusive estimate: %q", e.Text)
	}
	if len(e.Actions) == 0 || e.Actions[0].Command != "/gpu request 2 h200-x6 for 2h exclusive" {
		t.Fatalf("button %v", e.Actions)
	}
	r := mustOK(t, h.say("ayu@kestrel.example", e.Actions[0].Command))
	if !strings.Contains(r.Text, "Estimated cost 14400 JPY") {
		t.Errorf("the request it makes: %q", r.Text)
	}
	refusedWithAWorkingExample(t, h, "ayu@kestrel.example", "/gpu estimate 2 h200-x6 exclusive", "needs a number of GPUs, a class and a duration")
}
