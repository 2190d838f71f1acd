package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// policy check reads its command line as every other command does: an unknown flag (with its
// value), a flag given twice, a flag without its value, a dash too many, a word too many are each
// refused in one sentence in the shared words, ending with the command as typed and only the
// mistake put right; and that example, typed back, checks the file. Run from the repository, with
// a policy of other names than the example's.
func TestPolicyCheckMistakesAreRefusedAsEveryCommandsAreWithAnExampleThatWorks(t *testing.T) {
	clearEnv(t)
	t.Setenv("QM_POLICY", "")
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	const tokyo = "commands/testdata/tokyo.yaml"
	const example = "docs/quartermaster.example.yaml"
	for _, c := range []struct {
		args []string
		says string
		eg   string
	}{
		{[]string{"--stritc", tokyo}, "--stritc is not a flag of quartermaster policy check; it takes --policy alone (quartermaster policy check --help says what it does)",
			"quartermaster policy check " + tokyo},
		{[]string{tokyo, "--json=1"}, "--json is not a flag of quartermaster policy check; it takes --policy alone",
			"quartermaster policy check " + tokyo},
		{[]string{"--db", "sqlite:qm.db"}, "--db is not a flag of quartermaster policy check; it takes --policy alone",
			"quartermaster policy check " + example},
		{[]string{"--polcy", tokyo}, "--polcy is not a flag of quartermaster policy check; the nearest is --policy",
			"quartermaster policy check --policy " + tokyo},
		{[]string{"--pol", tokyo}, "--pol is not a flag of quartermaster policy check; it takes --policy alone",
			"quartermaster policy check --policy " + tokyo},
		{[]string{"---policy", tokyo}, "---policy has a dash too many; write --policy",
			"quartermaster policy check --policy " + tokyo},
		{[]string{"---policy"}, "---policy has a dash too many; write --policy",
			"quartermaster policy check --policy " + example},
		{[]string{"-=x", tokyo}, `"-=x" is no flag of quartermaster policy check (a flag is --NAME)`,
			"quartermaster policy check " + tokyo},
		{[]string{"--policy"}, "--policy needs a value",
			"quartermaster policy check --policy " + example},
		{[]string{tokyo, "--policy"}, "--policy needs a value",
			"quartermaster policy check --policy " + tokyo},
		{[]string{"--policy", tokyo, "--policy"}, "--policy needs a value",
			"quartermaster policy check --policy " + tokyo},
		{[]string{"--policy", tokyo, "extra"}, `policy check takes one policy file, but got "extra" too`,
			"quartermaster policy check --policy " + tokyo},
		{[]string{"extra", "--policy", tokyo}, `policy check takes one policy file, but got "extra" too`,
			"quartermaster policy check --policy " + tokyo},
		{[]string{tokyo, example}, `policy check takes one policy file, but got "` + example + `" too`,
			"quartermaster policy check " + tokyo},
		{[]string{"--json", "--policy", tokyo, "--json"}, "--json is not a flag of quartermaster policy check; it takes --policy alone",
			"quartermaster policy check --policy " + tokyo},
		{[]string{}, "policy check needs a policy file, or QM_POLICY set",
			"quartermaster policy check " + example},
		{[]string{""}, "the policy file's name is empty",
			"quartermaster policy check " + example},
		{[]string{"", "--policy", tokyo}, "the policy file's name is empty",
			"quartermaster policy check --policy " + tokyo},
	} {
		args := append([]string{"policy", "check"}, c.args...)
		code, stdout, stderr := runQM(args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || stdout != "" || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "quartermaster policy: "+c.says) || !strings.HasSuffix(msg, "e.g. "+c.eg) {
			t.Errorf("%v: exit %d, %q; want exit 2 and one sentence saying %q, ending e.g. %s", args, code, msg, c.says, c.eg)
			continue
		}
		if code, stdout, stderr := runQM(strings.Fields(c.eg)[1:]...); code != 0 || !strings.Contains(stdout, "is valid") {
			t.Errorf("%v: the example %s: exit %d, %s%s", args, c.eg, code, stdout, stderr)
		}
	}
	// A flag given twice is read where it was typed last; "--" ends the flags.
	for _, args := range [][]string{
		{"policy", "check", "--policy", "nowhere.yaml", "--policy", tokyo},
		{"policy", "check", "--", tokyo},
		{"policy", "check", tokyo},
		{"policy", "check", "--policy=" + tokyo},
	} {
		if code, stdout, stderr := runQM(args...); code != 0 || !strings.Contains(stdout, tokyo+" is valid") {
			t.Errorf("%v: exit %d, %s%s; want %s checked", args, code, stdout, stderr, tokyo)
		}
	}
}
