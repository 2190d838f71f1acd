package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A policy whose editor wrote an accented letter decomposed (e and U+0302, as some editors and
// file systems write it) names the same channel and group as one written with the composed letter
// (ê): policy check takes it, and in chat the channel typed as anyone types it names the team, and
// a person whose groups the directory writes composed is in the team whose idp_groups wrote them
// decomposed.
func TestNamesWrittenDecomposedInThePolicyAreTheComposedNames(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("../../commands/testdata/harbor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	for old, decomposed := range map[string]string{
		`channel: "#kelp-forest"`:        "channel: \"#kelp-fore\u0302t\"", // #kelp-forêt
		"idp_groups: [hr-kelp]":          "idp_groups: [hr-ke\u0301lp]",    // hr-kélp
		"tane@harbor.example, groups: [": "tane@harbor.example, groups: [hr-k\u00e9lp, ",
	} {
		if !strings.Contains(s, old) {
			t.Fatalf("harbor.yaml no longer has %q", old)
		}
		s = strings.Replace(s, old, decomposed, 1)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "harbor.yaml")
	if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"policy", "check", file}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("policy check of names written decomposed exited %d: %s%s", code, out.String(), errb.String())
	}
	msgs := runConsoleAt(t, dir, "2026-11-30T15:00:00Z", "tane@harbor.example: /gpu quota #kelp-for\u00eat\n", "--policy", file)
	if len(msgs) == 0 || !strings.Contains(msgs[0].Text, "kelp") || strings.Contains(msgs[0].Text, "Example:") {
		t.Errorf("/gpu quota #kelp-forêt, typed composed, answered %+v; want team kelp's quota", msgs)
	}
}
