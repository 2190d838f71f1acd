package templates

import (
	"strings"
	"testing"
	"testing/fstest"

	qmtemplates "github.com/acme/quartermaster/templates"
)

// A search of several words finds the templates whose name, tags, title or description hold
// every one of them (each where it may, capitals and accents aside, in any order): "vs code"
// finds VS Code and not the whole catalog or nothing; a word no template holds finds nothing.
func TestASearchOfSeveralWordsFindsTheTemplatesHoldingThemAll(t *testing.T) {
	c, err := Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	site := strings.NewReplacer("hello", "beam-align", "title: Hello", "title: Beam alignment", "description: Says hello.",
		"description: Aligns the laser on the optical bench.").Replace(goodDefinition)
	if problems := c.AddDir(fstest.MapFS{"beam-align.yaml": {Data: []byte(site)}}); len(problems) > 0 {
		t.Fatal(problems)
	}
	for _, tc := range []struct {
		words string
		want  []string // the templates found, all of them, best first
	}{
		{"vs code", []string{"vscode-server"}},
		{"Code  VS", []string{"vscode-server"}},
		{"LASER bénch", []string{"beam-align"}},
		{"align optical", []string{"beam-align"}},
		{"laser jupyter", nil},
		{"vs code zzz", nil},
	} {
		var got []string
		for _, tp := range c.Search(tc.words) {
			got = append(got, tp.Name)
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("Search(%q) = %v, want %v", tc.words, got, tc.want)
		}
	}
	// Each template found holds each word somewhere.
	for _, words := range []string{"jupyter dataset", "multi node", "pytorch training"} {
		got := c.Search(words)
		if len(got) == 0 {
			t.Errorf("Search(%q) found nothing", words)
		}
		for _, tp := range got {
			all := searchFold(tp.Name + " " + strings.Join(tp.Tags, " ") + " " + tp.Title + " " + tp.Description)
			for _, w := range strings.Fields(words) {
				if !strings.Contains(all, w) {
					t.Errorf("Search(%q) found %s, which does not hold %q", words, tp.Name, w)
				}
			}
		}
	}
}
