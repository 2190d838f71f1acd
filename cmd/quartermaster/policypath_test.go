package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// installedPolicyPath is where docs/operations.md installs the policy file.
func installedPolicyPath(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`install -m \d+ docs/quartermaster\.example\.yaml (\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/operations.md installs no policy file (install -m 0640 docs/quartermaster.example.yaml PATH)")
	}
	return string(m[1])
}

// Every policy path under /etc that the documentation and the commands' messages suggest is the
// one docs/operations.md installs the policy at, so that copying any of them finds the file; and
// discord register without a policy suggests it.
func TestEveryPolicyPathSuggestedIsWhereOperationsInstallsIt(t *testing.T) {
	want := installedPolicyPath(t)
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(repoRoot, "README.md"))
	sources, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sources {
		if !strings.HasSuffix(s, "_test.go") {
			files = append(files, s)
		}
	}
	etc := regexp.MustCompile(`/etc/quartermaster[A-Za-z0-9_./-]*\.ya?ml`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, p := range etc.FindAllString(line, -1) {
				if p != want {
					t.Errorf("%s:%d suggests the policy at %s, but docs/operations.md installs it at %s", f, i+1, p, want)
				}
			}
		}
	}

	clearEnv(t)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"discord", "register", "--print"}, nil, &out, &errb)
	if msg := errb.String(); code != 2 || !strings.Contains(msg, "QM_POLICY="+want+" quartermaster discord register --print") {
		t.Errorf("discord register without a policy: exit %d, %q; want the example QM_POLICY=%s", code, msg, want)
	}
}
