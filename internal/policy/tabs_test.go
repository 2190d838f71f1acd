package policy

import (
	"strings"
	"testing"
)

// A line indented with a tab (an editor's doing, invisible on screen) is named as such, with the
// fix, rather than with the YAML parser's "found character that cannot start any token".
func TestATabInTheIndentationIsNamed(t *testing.T) {
	for _, c := range []struct {
		src  string
		line int
	}{
		{"organization: Borealis Labs\nteams:\n\t- name: genomics\n", 3},
		{"organization: Borealis Labs\nclasses:\n  - name: notebook\n  \tsku: A10\n", 4},
	} {
		_, err := Load([]byte(c.src), "p.yaml")
		if err == nil {
			t.Fatalf("%q loaded", c.src)
		}
		pe, ok := err.(*Error)
		if !ok || len(pe.Problems) != 1 {
			t.Fatalf("%q: %v", c.src, err)
		}
		pr := pe.Problems[0]
		if pr.Line != c.line || !strings.Contains(pr.Msg, "tab") || !strings.Contains(pr.Msg, "spaces") {
			t.Errorf("%q: line %d, %q; want line %d naming the tab and spaces", c.src, pr.Line, pr.Msg, c.line)
		}
	}
}
