package commands

import (
	"fmt"
	"strings"
	"testing"
)

// /gpu templates with several words lists the templates holding every word, capitals and accents
// aside, and says so: "vs code" finds VS Code, not a refusal whose example lists the whole
// catalog. Words that no template holds together are answered as one word no template holds is.
func TestTemplatesSearchOfSeveralWordsFindsTheTemplatesHoldingThemAll(t *testing.T) {
	for _, pf := range []string{otherPolicy, "testdata/petrel.yaml"} {
		h := templatesOn(t, pf)
		all := len(h.bot.Templates.Catalog.List())
		for _, ask := range []string{"/gpu templates vs code", "/gpu templates Code VS", `/gpu templates "VS Cöde"`} {
			r := h.say("anyone@elsewhere.example", ask)
			if r.Error || len(r.Sections) != 1 || !strings.HasPrefix(r.Sections[0].Title, "vscode-server ") {
				t.Errorf("%s: %q, %d sections; want vscode-server alone", ask, r.Text, len(r.Sections))
				continue
			}
			if !strings.HasPrefix(r.Text, fmt.Sprintf("1 of %d templates match ", all)) {
				t.Errorf("%s: %q", ask, r.Text)
			}
		}
		r := h.say("anyone@elsewhere.example", "/gpu templates vs code zzz")
		if !r.Error || !strings.Contains(r.Text, `No template matches "vs code zzz"`) || !strings.Contains(r.Text, "Example: /gpu templates ") {
			t.Errorf("no template holds all the words: %q", r.Text)
		}
	}
}

// A search that finds no template gives as its example the template a word typed is a near miss
// of, where one is, and, typed back, the example lists templates.
func TestTemplatesSearchFindingNoneGivesTheNearestTemplate(t *testing.T) {
	for _, pf := range []string{otherPolicy, "testdata/harbor.yaml"} {
		h := templatesOn(t, pf)
		for ask, want := range map[string]string{
			"/gpu templates pytorh-ddp":     "/gpu templates pytorch-ddp",
			"/gpu templates rapids notebok": "/gpu templates rapids-notebook",
			"/gpu templates zzzz":           "",
		} {
			r := h.say("anyone@elsewhere.example", ask)
			i := strings.LastIndex(r.Text, "Example: ")
			if !r.Error || i < 0 || !strings.HasPrefix(r.Text[i:], "Example: "+want) {
				t.Errorf("%s: %q; want its example to be %q", ask, r.Text, want)
				continue
			}
			back := h.say("anyone@elsewhere.example", r.Text[i+len("Example: "):])
			if back.Error || len(back.Sections) == 0 {
				t.Errorf("%s: the example typed back: %q", ask, back.Text)
			}
		}
	}
}
