package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// QM_TEMPLATES_DIR loads NAME.yml as it loads NAME.yaml; its README.md is passed over without a
// word, and a file that is no definition (a template written as JSON) is said once on standard
// error, as not loaded.
func TestTemplatesDirLoadsYmlAndSaysOnceWhatItDoesNotLoad(t *testing.T) {
	dir := t.TempDir()
	good := "name: beam-align\nversion: 1\ntitle: Beam align\ndescription: Aligns a beam.\ntags: [optics]\nkind: batch\nexample: beam=b2\n" +
		"parameters:\n  - name: beam\n    type: string\n    default: b1\n    description: Which beam.\nrun: |\n  exec echo {{shq .P.beam}}\n"
	cat, warn := siteCatalog(t, dir, map[string]string{"beam-align.yml": good, "README.md": "# Our templates\n", "mirror.json": `{"name": "mirror"}`})
	if _, err := cat.Get("beam-align"); err != nil {
		t.Errorf("beam-align.yml is not in the catalog: %v", err)
	}
	want := "warning: QM_TEMPLATES_DIR " + filepath.Join(dir, "mirror.json") + ": not a template definition, which is a NAME.yaml or NAME.yml file"
	if got := warn.String(); !strings.HasPrefix(got, want) || strings.Count(got, "\n") != 1 || strings.Contains(got, "README") {
		t.Errorf("warnings = %q, want one line starting %q", got, want)
	}
}
