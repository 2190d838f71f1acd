package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A policy file that does not exist, is too large, is a directory, is refused as every other
// mistake of the command line is: one sentence, then the command as typed with the policy pointing
// at a file that works (a policy file beside a missing one whose name is near it, the YAML file in
// the directory typed, else the example policy), given with --policy where it came from
// QM_POLICY. The example that names a file here is run, and works.
func TestAPolicyFileThatCannotBeReadGetsTheCommandAsTypedWithAPolicyThatWorks(t *testing.T) {
	clearEnv(t)
	t.Setenv("QM_POLICY", "")
	dir := t.TempDir()
	other, err := os.ReadFile("../../commands/testdata/tokyo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tokyo := filepath.Join(dir, "tokyo.yaml")
	if err := os.WriteFile(tokyo, other, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("# padding\n", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	lone := filepath.Join(t.TempDir(), "policy")
	if err := os.MkdirAll(lone, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lone, "site.yaml"), other, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nowhere.yaml")
	const works = "docs/quartermaster.example.yaml"
	for _, c := range []struct {
		env  string // QM_POLICY
		args []string
		says string
		eg   string
		run  bool
	}{
		{"", []string{"policy", "check", missing}, "the policy file " + missing + " does not exist",
			"quartermaster policy check " + works, false},
		{"", []string{"policy", "check", filepath.Join(dir, "tokio.yaml")}, "does not exist",
			"quartermaster policy check " + tokyo, true},
		{"", []string{"templates", "list", "--policy=" + filepath.Join(dir, "tokyo.yml")}, "does not exist",
			"quartermaster templates list --policy=" + tokyo, true},
		{"", []string{"report", "--week", "2026-W43", "--policy", missing, "--format", "csv"}, "does not exist",
			"quartermaster report --week 2026-W43 --policy " + works + " --format csv", false},
		{missing, []string{"templates", "show", "pytorch-ddp"}, "does not exist",
			"quartermaster templates show pytorch-ddp --policy " + works, false},
		{"", []string{"console", "--json", "--policy", big}, "is larger than 8 MiB",
			"quartermaster console --json --policy " + works, false},
		{"", []string{"templates", "list", "--policy", lone}, "is a directory",
			"quartermaster templates list --policy " + filepath.Join(lone, "site.yaml"), true},
	} {
		t.Setenv("QM_POLICY", c.env)
		code, _, stderr := runQM(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") > 0 || !strings.Contains(msg, c.says) || !strings.HasSuffix(msg, "e.g. "+c.eg) || strings.Contains(msg, "is one that works") {
			t.Errorf("%v (QM_POLICY=%q): exit %d, %q; want exit 2 and one sentence saying %q ending e.g. %s", c.args, c.env, code, msg, c.says, c.eg)
			continue
		}
		if c.run {
			t.Setenv("QM_POLICY", "")
			if code, _, stderr := runQM(strings.Fields(c.eg)[1:]...); code != 0 {
				t.Errorf("the example %s: exit %d, %s", c.eg, code, stderr)
			}
		}
	}
}
