package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Each systemd unit's Documentation= points at something that exists where the unit runs:
// `systemctl help` opens it. A file:// page must be one the install walkthrough of
// docs/operations.md installs; a page of the repository (https://github.com/acme/quartermaster/
// blob/main/PATH) must be a file of the repository. The service's unit named
// /usr/local/share/doc/quartermaster/operations.md, which no step installs.
func TestUnitDocumentationExists(t *testing.T) {
	ops := string(mustRead(t, filepath.Join(root, "docs", "operations.md")))
	begin, end := strings.Index(ops, "<!-- walkthrough:begin -->"), strings.Index(ops, "<!-- walkthrough:end -->")
	if begin < 0 || end < begin {
		t.Fatal("docs/operations.md has no walkthrough")
	}
	walk := ops[begin:end]
	installed := func(path string) bool {
		for _, line := range strings.Split(walk, "\n") {
			f := strings.Fields(line)
			if len(f) < 3 || f[0] != "install" || slices.Contains(f, "-d") {
				continue
			}
			dest := f[len(f)-1]
			if dest == path || strings.HasSuffix(dest, "/") && filepath.Join(dest, filepath.Base(path)) == path {
				return true
			}
		}
		return false
	}
	repoPage := regexp.MustCompile(`^https://github\.com/acme/quartermaster/blob/main/(.+)$`)
	units, err := filepath.Glob(filepath.Join(root, "deploy", "systemd", "*.service"))
	if err != nil || len(units) == 0 {
		t.Fatalf("no units: %v", err)
	}
	for _, u := range units {
		for _, line := range strings.Split(string(mustRead(t, u)), "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
			if !ok || k != "Documentation" {
				continue
			}
			for _, uri := range strings.Fields(v) {
				switch m := repoPage.FindStringSubmatch(uri); {
				case strings.HasPrefix(uri, "file://"):
					if p := strings.TrimPrefix(uri, "file://"); !installed(p) {
						t.Errorf("%s: Documentation=%s: no step of the install walkthrough installs %s", filepath.Base(u), uri, p)
					}
				case m != nil:
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(m[1]))); err != nil {
						t.Errorf("%s: Documentation=%s: the repository has no %s", filepath.Base(u), uri, m[1])
					}
				default:
					t.Errorf("%s: Documentation=%s is neither a page the walkthrough installs nor one of the repository", filepath.Base(u), uri)
				}
			}
		}
	}
}
