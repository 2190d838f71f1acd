package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/templates"
)

// QM_TEMPLATES_DIR adds an installation's own templates: a good one is in the catalog, a broken
// one is left out with a warning naming the file, line and field, and a directory that is not
// there is refused in one sentence with an example.
func TestTemplatesDirAddsGoodTemplatesAndWarnsOfBrokenOnes(t *testing.T) {
	dir := t.TempDir()
	good := "name: lens-check\nversion: 2\ntitle: Lens check\ndescription: Checks a lens.\ntags: [optics]\nkind: batch\nexample: lens=l7\n" +
		"parameters:\n  - name: lens\n    type: string\n    default: l1\n    description: Which lens.\nrun: |\n  exec echo {{shq .P.lens}}\n"
	bad := strings.Replace(strings.ReplaceAll(good, "lens-check", "prism-bad"), "kind: batch", "kind: service", 1)
	cat, warn := siteCatalog(t, dir, map[string]string{"lens-check.yaml": good, "prism-bad.yaml": bad})
	if tp, err := cat.Get("lens-check"); err != nil || tp.Version != 2 {
		t.Errorf("the good site template: %v, %v", tp, err)
	}
	if _, err := cat.Get("prism-bad"); err == nil {
		t.Error("the broken site template is in the catalog")
	}
	want := filepath.Join(dir, "prism-bad.yaml") + `:6: kind must be interactive or batch, not "service"`
	if got := warn.String(); !strings.Contains(got, want) || strings.Count(got, "\n") != 1 {
		t.Errorf("warnings = %q, want one line with %q", got, want)
	}
	_, err := loadCatalog(filepath.Join(dir, "nowhere"), warn)
	if err == nil || !strings.Contains(err.Error(), "QM_TEMPLATES_DIR=") || !strings.Contains(err.Error(), "e.g. QM_TEMPLATES_DIR=") {
		t.Errorf("a missing directory: %v", err)
	}
}

// siteCatalog writes files (name: body) into dir and loads the catalog with dir as
// QM_TEMPLATES_DIR: the catalog, and what loading it warned of.
func siteCatalog(t *testing.T, dir string, files map[string]string) (*templates.Catalog, *strings.Builder) {
	t.Helper()
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var warn strings.Builder
	cat, err := loadCatalog(dir, &warn)
	if err != nil {
		t.Fatal(err)
	}
	return cat, &warn
}
