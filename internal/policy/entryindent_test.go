package policy

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// tokyoRulesLast is the Tokyo lab's policy (commands/testdata/tokyo.yaml) with its exception
// rules moved to the end, after the sim: nodes: section, as a policy written in another order has them.
func tokyoRulesLast(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../commands/testdata/tokyo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(string(b), "exceptions:\n")
	rules, tail, ok := strings.Cut(rest, "approvals:\n")
	if !ok {
		t.Fatal("tokyo.yaml has no approvals: after its exceptions:")
	}
	return head + "approvals:\n" + tail + "exceptions:\n" + rules
}

// TestAListEntryAtAnotherIndentIsExplained: a list entry ("- ") whose indentation lines up with a
// key above it, or with nothing, or that sits further in than a line with its value, was reported
// in the parser's words ("did not find expected key") at some lines; every such slip, in any
// section, names what YAML expected there and the entry written where it works.
func TestAListEntryAtAnotherIndentIsExplained(t *testing.T) {
	src := tokyoRulesLast(t)
	const entry = "  - name: long-lease"
	for _, c := range []struct {
		old, new, msg string
	}{
		{entry, "- name: long-lease", `this list entry is indented 0 spaces, where YAML expected a key lined up with exceptions: (line %[2]d), not a list entry; indent it as the entry at line %[1]d (2 spaces, its keys at 4): "  - name: long-lease"`},
		{entry, "    - name: long-lease", `this list entry is indented 4 spaces, where YAML expected a key lined up with why: (line %[3]d), not a list entry; indent it as the entry at line %[1]d (2 spaces, its keys at 4): "  - name: long-lease"`},
		{entry, " - name: long-lease", `this list entry is indented 1 space, where YAML expected a line lined up with a block above it (line %[3]d at 4; line %[1]d's entry at 2, its keys at 4); indent it as the entry at line %[1]d (2 spaces, its keys at 4): "  - name: long-lease"`},
		{entry, "      - name: long-lease", `this list entry is indented 6 spaces, where YAML expected nothing further in than line %[3]d, which has its value already; indent it as the entry at line %[1]d (2 spaces, its keys at 4): "  - name: long-lease"`},
	} {
		bad := strings.Replace(src, c.old, c.new, 1)
		_, err := Load([]byte(bad), "bad.yaml")
		pe, ok := err.(*Error)
		if !ok {
			t.Fatalf("%q: want a refusal, got %v", c.new, err)
		}
		first := lineOf(t, bad, "name: many-gpus")
		want := fmtLines(c.msg, first, lineOf(t, bad, "exceptions:"), first+2)
		wantProblem(t, pe, first+3, want)
	}

	// A sim node at another indentation than the node above it, with the rules after it.
	for _, c := range []struct{ new, msg string }{
		{"  - {name: a100", `this list entry is indented 2 spaces, where YAML expected a key lined up with nodes: (line %[2]d), not a list entry; indent it as the entry at line %[1]d (4 spaces): "    - {name: a100, count: 2, class: a100-big, gpus: 4}"`},
		{"      - {name: a100", `this list entry is indented 6 spaces, where YAML expected nothing further in than line %[1]d, which has its value already; indent it as the entry at line %[1]d (4 spaces): "    - {name: a100, count: 2, class: a100-big, gpus: 4}"`},
	} {
		bad := strings.Replace(src, "    - {name: a100", c.new, 1)
		_, err := Load([]byte(bad), "bad.yaml")
		pe, ok := err.(*Error)
		if !ok {
			t.Fatalf("%q: want a refusal, got %v", c.new, err)
		}
		l4 := lineOf(t, bad, "{name: l4")
		wantProblem(t, pe, l4+1, fmtLines(c.msg, l4, lineOf(t, bad, "nodes:")))
	}

	// A team after one whose groups are a list of their own lines lines up with the team, not
	// with the groups.
	teams := strings.Replace(src, "    idp_groups: [lab-vision]\n", "    idp_groups:\n      - lab-vision\n", 1)
	bad := strings.Replace(teams, "  - name: speech", "    - name: speech", 1)
	_, err := Load([]byte(bad), "bad.yaml")
	pe, ok := err.(*Error)
	if !ok {
		t.Fatalf("want a refusal, got %v", err)
	}
	vision := lineOf(t, bad, "name: vision-lab")
	wantProblem(t, pe, lineOf(t, bad, "name: speech"), fmtLines(`this list entry is indented 4 spaces, where YAML expected a key lined up with data_classes: (line %[2]d), not a list entry; indent it as the entry at line %[1]d (2 spaces, its keys at 4): "  - name: speech"`, vision, lineOf(t, bad, "data_classes: [open]")))

	// The entries as written load.
	if _, err := Load([]byte(teams), "good.yaml"); err != nil {
		t.Fatalf("the policy with its rules last: %v", err)
	}
}

func fmtLines(format string, lines ...int) string {
	args := make([]any, len(lines))
	for i, l := range lines {
		args[i] = l
	}
	return fmt.Sprintf(format, args...)
}
