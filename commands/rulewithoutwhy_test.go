package commands

import (
	"strings"
	"testing"
)

// A published rule written without a why (the contract's own example has several) is named by
// its name alone: "the published rule too-big applies", "Rule: too-big.", "too-big (when …)",
// never "too-big (Rule too-big)", which says its name twice and nothing more.
func TestARuleWithoutAWhyIsNamedOnce(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, otherPolicy, "    why: Bigger than the class allows\n", ""))
	r := mustOK(t, h.say("rita@borealis.example", "/gpu request 3 dev for 1h"))
	texts := []string{r.Text}
	for _, who := range []string{"olga@borealis.example", "rita@borealis.example"} {
		for _, n := range h.notices(who) {
			texts = append(texts, n.PlainText())
		}
	}
	texts = append(texts, mustOK(t, h.say("rita@borealis.example", "/gpu policy")).PlainText())
	all := strings.Join(texts, "\n")
	if strings.Contains(all, "Rule too-big") {
		t.Errorf("a rule without a why is named twice:\n%s", all)
	}
	for _, want := range []string{"the published rule too-big applies", "Rule: too-big.", "too-big (when request.gpus > class.max_gpus)",
		"beyond-quota — Beyond the team's quota (when"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in:\n%s", want, all)
		}
	}
}
