package main

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/buildinfo"
)

// The agent says which build it is, as quartermaster does: `version` prints the version, commit
// and Go version, `version --short` the version alone, and --version (or -version) is version; the
// help lists it, and a misspelling of it is answered with it.
func TestVersion(t *testing.T) {
	b := buildinfo.Get()
	code, out, stderr := runCmd("version")
	if code != 0 || stderr != "" || !strings.HasPrefix(out, "quartermaster-agent "+b.Version+"\n") ||
		!strings.Contains(out, "commit:  "+b.Commit+"\n") || !strings.Contains(out, b.GoVersion) {
		t.Errorf("version: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	for _, args := range [][]string{{"--version"}, {"-version"}} {
		if c, o, e := runCmd(args...); c != 0 || o != out || e != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want version's", args, c, o, e)
		}
	}
	if code, out, stderr := runCmd("version", "--short"); code != 0 || out != b.Version+"\n" || stderr != "" {
		t.Errorf("version --short: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	_, help, _ := runCmd("--help")
	if !strings.Contains(help, "\n  version ") {
		t.Errorf("--help does not list version:\n%s", help)
	}
	if code, out, _ := runCmd("version", "--help"); code != 0 || !strings.Contains(out, "\n  -short") || strings.Contains(out, "\n  -fake string") {
		t.Errorf("version --help: exit %d, want its own flag, --short, alone:\n%s", code, out)
	}
	code, _, stderr = runCmd("versoin")
	if first, _, _ := strings.Cut(stderr, "\n"); code != 2 || !strings.HasSuffix(first, "e.g. quartermaster-agent version") {
		t.Errorf("versoin: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCmd("version", "--fake", "dgxa100")
	if first, _, _ := strings.Cut(stderr, "\n"); code != 2 || !strings.HasSuffix(first, "e.g. quartermaster-agent version") {
		t.Errorf("version --fake dgxa100: exit %d, %q; want a refusal whose example is version alone", code, stderr)
	}
}
