package policy

import (
	"os"
	"strings"
	"testing"
)

// A person's email that looks like another's without being it (a Cyrillic о in оlga next to
// olga, a budget owner written tаne with a Cyrillic а where the directory has tane) draws a
// warning naming both and the line, as look-alike team names and groups do: approvals and
// notices would go to someone other than the reader thinks.
func TestPolicyCheckWarnsOfLookAlikePeople(t *testing.T) {
	b, err := os.ReadFile("../../commands/testdata/harbor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ines := "  - {user: ines@harbor.example, groups: [hr-seismic]}\n"
	src := strings.Replace(string(b), ines, ines+"  - {user: \"\u0456nes@harbor.example\", groups: [hr-kelp]}\n", 1)
	src = strings.Replace(src, "budget_owners: [tane@harbor.example]", "budget_owners: [\"t\u0430ne@harbor.example\"]", 1)
	p, err := Load([]byte(src), "harbor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, w := range p.Warnings {
		all = append(all, w.String())
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{
		"directory entry \u0456nes@harbor.example looks like ines@harbor.example",
		"team kelp's budget owner t\u0430ne@harbor.example looks like tane@harbor.example",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no warning %q in:\n%s", want, text)
		}
	}
	for _, w := range p.Warnings {
		if strings.Contains(w.Msg, "looks like") && strings.Contains(w.Msg, "@") && w.Line == 0 {
			t.Errorf("a warning without its line: %v", w)
		}
	}
	if plain, _ := LoadFile("../../commands/testdata/harbor.yaml"); len(plain.Warnings) != 0 {
		t.Errorf("harbor.yaml draws warnings: %v", plain.Warnings)
	}
}
