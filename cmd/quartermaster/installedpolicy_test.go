package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On an installed host the working directory holds no docs/ (the unit runs in
// /var/lib/quartermaster): a policy file that does not exist is answered with the installed
// policy (/etc/quartermaster/quartermaster.yaml, where the install puts it) as the example, which
// loads there, rather than the repository's example file, which is not there.
func TestAMissingPolicyOnAnInstalledHostNamesTheInstalledPolicy(t *testing.T) {
	clearEnv(t)
	src, err := os.ReadFile("../../commands/testdata/tokyo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	etc := filepath.Join(t.TempDir(), "quartermaster.yaml")
	if err := os.WriteFile(etc, src, 0o640); err != nil {
		t.Fatal(err)
	}
	was := installedPolicies
	installedPolicies = []string{etc}
	t.Cleanup(func() { installedPolicies = was })
	t.Chdir(t.TempDir())
	missing := filepath.Join(t.TempDir(), "quartermster.yaml")
	t.Setenv("QM_POLICY", missing)
	code, _, stderr := runQM("templates", "show", "pytorch-ddp")
	msg := strings.TrimSpace(stderr)
	if code != 2 || !strings.Contains(msg, "does not exist") || !strings.HasSuffix(msg, "e.g. quartermaster templates show pytorch-ddp --policy "+etc) {
		t.Fatalf("exit %d, %q; want the installed policy as the example", code, msg)
	}
	t.Setenv("QM_POLICY", "")
	if code, _, stderr := runQM("templates", "show", "pytorch-ddp", "--policy", etc); code != 0 {
		t.Errorf("the example is refused: %s", stderr)
	}
}
