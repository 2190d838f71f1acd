package templates

import (
	"strings"
	"testing"
	"testing/fstest"

	qmtemplates "github.com/acme/quartermaster/templates"
)

// A site directory's NAME.yml loads as NAME.yaml does (and is checked as one is). Notes for people
// (README, *.md, *.txt), hidden files and folders are passed over without a word; any other file
// (a definition written as JSON, an editor's copy) is said once, as not loaded, so that an admin
// is not left wondering why a template is missing. The same name in two files of the directory
// names the file that has it.
func TestASiteDirectoryLoadsYmlAndSaysWhichFilesItPassesOver(t *testing.T) {
	c, err := Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	def := func(name string) []byte { return []byte(strings.ReplaceAll(goodDefinition, "hello", name)) }
	site := fstest.MapFS{
		"lens-check.yml":       {Data: def("lens-check")},
		"prism-bad.yml":        {Data: def("prism")},
		"optics.yaml":          {Data: def("optics")},
		"optics.yml":           {Data: def("optics")},
		"README.md":            {Data: []byte("# Our templates")},
		"NOTES.txt":            {Data: []byte("ask kim")},
		"README":               {Data: []byte("ask kim")},
		".lens-check.yml.swp":  {Data: []byte{0, 1}},
		"old/lens-old.yaml":    {Data: def("lens-old")},
		"beam.json":            {Data: []byte(`{"name": "beam"}`)},
		"lens-check.yaml.orig": {Data: def("lens-check")},
	}
	problems := c.AddDir(site)
	for _, name := range []string{"lens-check", "optics"} {
		if _, err := c.Get(name); err != nil {
			t.Errorf("%s from the site directory is not in the catalog: %v", name, err)
		}
	}
	for _, name := range []string{"prism", "lens-old", "beam"} {
		if _, err := c.Get(name); err == nil {
			t.Errorf("%s is in the catalog", name)
		}
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
	}
	want := []string{
		"beam.json: not a template definition, which is a NAME.yaml or NAME.yml file",
		"lens-check.yaml.orig: not a template definition, which is a NAME.yaml or NAME.yml file",
		`optics.yml:1: template "optics" is already defined in optics.yaml; give it another name`,
		`prism-bad.yml:1: name "prism" must match the file name prism-bad.yml`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
