package main

import (
	"strings"
	"testing"
)

// --version, or version, typed after flags meant for every command (quartermaster --db x
// --version) prints the version, as it does first on the line; it was answered `"--db" is not a
// quartermaster command`.
func TestVersionAfterGlobalFlagsPrintsTheVersion(t *testing.T) {
	clearEnv(t)
	_, want, _ := runQM("version")
	_, wantShort, _ := runQM("version", "--short")
	if !strings.HasPrefix(want, "quartermaster ") || strings.TrimSpace(wantShort) == "" {
		t.Fatalf("quartermaster version printed %q and --short %q", want, wantShort)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", "sqlite:/tmp/nowhere.db", "--version"}, want},
		{[]string{"--db=sqlite:/tmp/nowhere.db", "-version"}, want},
		{[]string{"--policy", "../../commands/testdata/kolkata.yaml", "--db", "postgres://u@h/db", "version"}, want},
		{[]string{"--policy", "../../commands/testdata/kolkata.yaml", "--version", "--short"}, wantShort},
		{[]string{"--json", "version", "--short"}, wantShort},
	} {
		code, stdout, stderr := runQM(c.args...)
		if code != 0 || stdout != c.want || stderr != "" {
			t.Errorf("quartermaster %s: exit %d, %q, %q; want exit 0 and %q", strings.Join(c.args, " "), code, stdout, stderr, c.want)
		}
	}
	// After another command, --version is that command's: not the version.
	if code, stdout, _ := runQM("--policy", "../../commands/testdata/kolkata.yaml", "policy", "check", "--version"); code == 0 || stdout == want {
		t.Errorf("quartermaster --policy … policy check --version: exit %d, %q; want it refused as policy check's", code, stdout)
	}
}
