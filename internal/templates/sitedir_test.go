package templates

import (
	"strings"
	"testing"
	"testing/fstest"

	qmtemplates "github.com/acme/quartermaster/templates"
)

// A directory of an installation's own templates joins the shipped catalog: each good definition
// is listed, searched and rendered as a shipped one is; a broken one is refused with one sentence
// naming its file, line and field, and the others in the directory still load. A definition that
// takes a shipped template's name is refused too, so that /gpu template NAME means one thing.
func TestASiteDirectoryAddsItsTemplatesAndRefusesOnlyTheBrokenOnes(t *testing.T) {
	c, err := Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	shipped := len(c.List())
	site := fstest.MapFS{
		"optics-render.yaml": {Data: []byte(strings.ReplaceAll(goodDefinition, "hello", "optics-render"))},
		"lens-bad.yaml":      {Data: []byte(strings.Replace(strings.ReplaceAll(goodDefinition, "hello", "lens-bad"), "kind: batch", "kind: batch\ngpu: 1", 1))},
		"jupyterlab.yaml":    {Data: []byte(strings.ReplaceAll(goodDefinition, "hello", "jupyterlab"))},
		"README.md":          {Data: []byte("not a template")},
	}
	problems := c.AddDir(site)
	if len(c.List()) != shipped+1 {
		t.Fatalf("the catalog has %d templates after the site directory, want %d", len(c.List()), shipped+1)
	}
	tp, err := c.Get("optics-render")
	if err != nil {
		t.Fatalf("the good site template is not in the catalog: %v", err)
	}
	if got := c.Search("optics"); len(got) != 1 || got[0] != tp {
		t.Errorf("searching the site template's name found %v", got)
	}
	if jl, _ := c.Get("jupyterlab"); jl == nil || jl.Title != "JupyterLab" {
		t.Errorf("a site file named like a shipped template replaced it: %+v", jl)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
	}
	want := []string{
		`jupyterlab.yaml:1: template "jupyterlab" is already a template of the catalog; give it another name`,
		`lens-bad.yaml:7: unknown field "gpu"`,
	}
	if len(got) != len(want) {
		t.Fatalf("problems = %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) || strings.Count(got[i], ". ") > 0 {
			t.Errorf("problem %d = %q, want one sentence starting %q", i, got[i], want[i])
		}
	}
}
