package commands

import (
	"strings"
	"testing"
)

// TestAnEstimateOrQuotaRequestOfNoClassNameKeepsItsLength: /gpu estimate 2 éclair 90m, whose
// class could be no class's name, was refused with the example /gpu estimate 2 cuivre 4h, and a
// quota request's "for 2d" went from its example: the refusal stopped reading at the class. The
// example is the command typed with only the class put right.
func TestAnEstimateOrQuotaRequestOfNoClassNameKeepsItsLength(t *testing.T) {
	h := newHarnessOn(t, baobabPolicy)
	for ask, example := range map[string]string{
		"/gpu estimate 2 éclair 90m":                          "/gpu estimate 2 cuivre 1h30m",
		"/gpu estimate 1 <!channel> for 3h":                   "/gpu estimate 1 cuivre 3h",
		"/gpu quota request +1 éclair for 2d because atelier": "/gpu quota request +1 cuivre for 2d because atelier",
	} {
		r := h.say("fatou@baobab.example", ask)
		msg, ex, ok := strings.Cut(r.Text, " Example: ")
		if !r.Error || !ok || !strings.HasSuffix(msg, "is not a class name.") || ex != example {
			t.Errorf("%s: %q; want it refused as no class name, with the example %q", ask, r.Text, example)
			continue
		}
		if r := h.say("fatou@baobab.example", ex); r.Error {
			t.Errorf("the example %s is refused: %s", ex, r.Text)
		}
	}
}
