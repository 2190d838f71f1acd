package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

const stJohnsPolicy = "testdata/stjohns.yaml"

// TestAClassTypedAsTheStartOfItsNameIsTheExample: with classes l40s, h200-sxm and mi300x,
// "/gpu request 1 h200 for 2h" was refused with the example /gpu request 1 l40s for 2h, another
// GPU than the one typed, as h200 is four letters off h200-sxm. A class typed as the part of one
// class's name before its - or _ (or with more after it) is the class of the example, and the
// refusal names it first.
func TestAClassTypedAsTheStartOfItsNameIsTheExample(t *testing.T) {
	h := newHarnessOn(t, stJohnsPolicy)
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	AddTemplates(h.bot, cat, workload.Settings{})
	for ask, example := range map[string]string{
		"/gpu request 1 h200 for 2h":                     "/gpu request 1 h200-sxm for 2h",
		"/gpu estimate 2 H200 3h":                        "/gpu estimate 2 h200-sxm 3h",
		"/gpu quota request +1 h200 for 1d because próf": "/gpu quota request +1 h200-sxm for 1d because próf",
		"/gpu request 1 h200-sxm-141g for 2h":            "/gpu request 1 h200-sxm for 2h",
		"/gpu submit cuda-smoke class=h200 for=2h":       "/gpu submit cuda-smoke for=2h class=h200-sxm",
	} {
		r := h.say("jón@lab.example", ask)
		msg, ex, ok := strings.Cut(r.Text, " Example: ")
		if !r.Error || !ok || !strings.Contains(msg, "the catalog has h200-sxm, ") || ex != example {
			t.Errorf("%s: %q; want it refused naming h200-sxm first, with the example %q", ask, r.Text, example)
			continue
		}
		if r := h.say("jón@lab.example", ex); r.Error {
			t.Errorf("the example %s is refused: %s", ex, r.Text)
		}
	}
}
