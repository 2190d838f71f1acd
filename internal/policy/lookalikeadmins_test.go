package policy

import (
	"os"
	"strings"
	"testing"
)

// An oidc.admins entry that looks like a directory entry's or an approver's email without being
// it (kenjі with a Cyrillic і, іnfra) draws the warning that look-alike budget owners draw, with
// its line: the person the reader thinks may unlink accounts may not, and someone else may.
// Admins written as they are, and groups, draw none.
func TestPolicyCheckWarnsOfLookAlikeAdmins(t *testing.T) {
	b, err := os.ReadFile("../../commands/testdata/tokyo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plain := string(b) + "oidc:\n  admins: [infra, rin@sakura.example, kenji@sakura.example]\n"
	if p, err := Load([]byte(plain), "tokyo.yaml"); err != nil || len(p.Warnings) != 0 {
		t.Fatalf("admins written as they are: %v %v", err, p.Warnings)
	}
	src := string(b) + "oidc:\n  admins: [infra, \"kenj\u0456@sakura.example\", \"\u0456nfra@sakura.example\"]\n"
	p, err := Load([]byte(src), "tokyo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, w := range p.Warnings {
		all = append(all, w.String())
		if strings.Contains(w.Msg, "looks like") && w.Line == 0 {
			t.Errorf("a warning without its line: %v", w)
		}
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{
		"oidc admin kenj\u0456@sakura.example looks like kenji@sakura.example",
		"oidc admin \u0456nfra@sakura.example looks like infra@sakura.example",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no warning %q in:\n%s", want, text)
		}
	}
}
