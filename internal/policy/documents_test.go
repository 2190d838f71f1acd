package policy

import (
	"strings"
	"testing"
)

// TestASecondYAMLDocumentIsRefused: a policy is one YAML document. A "---" that starts another
// one (say, to split the catalog from the teams) would have everything after it ignored, the
// teams and their quotas with it, so it is refused at the line of the "---"; a "---" that opens
// the only document, or one with nothing after it, is fine.
func TestASecondYAMLDocumentIsRefused(t *testing.T) {
	pe := refused(t, "\nteams:\n", "\n---\nteams:\n")
	wantProblem(t, pe, 38, "a second YAML document starts here, and a policy is one document: what follows would be ignored; remove the --- line")
	pe = refused(t, "\nteams:\n", "\n---\nteams:\n---\n- a\n")
	if len(pe.Problems) != 1 {
		t.Errorf("want one problem for the first extra document; got:\n%v", pe)
	}
	for _, ok := range []string{"---\n" + exampleWith(t), exampleWith(t) + "---\n", exampleWith(t) + "---\n# nothing more\n", exampleWith(t) + "...\n"} {
		if _, err := Load([]byte(ok), "p.yaml"); err != nil {
			t.Errorf("%q…%q: %v", ok[:10], ok[len(ok)-20:], err)
		}
	}
	if !strings.Contains(exampleWith(t), "\nteams:\n") {
		t.Fatal("the example has no teams: line")
	}
}
