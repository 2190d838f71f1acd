package commands

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A reply never puts 's after a name it fills in ("team genomics's quota", "Wattle Compute
// Institute's sign-on"): a name ending in s reads wrong with it, so the reply says "the quota of
// team genomics" instead, for every name.
func TestRepliesDoNotAddApostropheSToNames(t *testing.T) {
	h := newHarnessOn(t, "testdata/sydney.yaml")
	r := mustOK(t, h.say("ravi@wattle.example", "/gpu quota request +1 notebook for 2h because a deadline"))
	id := leaseIn(t, r.Text).String()
	mustOK(t, h.say("priya@wattle.example", "/gpu approve "+id))
	out := mustOK(t, h.say("ravi@wattle.example", "/gpu release "+id)).Text
	if strings.Contains(out, "genomics's") || !strings.Contains(out, "of team genomics") {
		t.Errorf("releasing a quota increase of team genomics says %q, want the quota of team genomics", out)
	}
	r = mustOK(t, h.say("ravi@wattle.example", "/gpu quota request +1 notebook for 2h because a deadline"))
	out = mustOK(t, h.say("ravi@wattle.example", "/gpu release "+leaseIn(t, r.Text).String())).Text
	if strings.Contains(out, "genomics's") || !strings.Contains(out, "of team genomics") {
		t.Errorf("cancelling a quota request of team genomics says %q, want the quota of team genomics", out)
	}
	if out := h.say("tom@wattle.example", "/gpu report team genomics").Text; strings.Contains(out, "genomics's") {
		t.Errorf("a showback refused says %q", out)
	}
}

// possessiveOfName is 's right after a filled-in value (%s's, %v's) in a string literal.
var possessiveOfName = regexp.MustCompile(`%[sv]['’]s\b`)

// The rule holds in every text the chat commands, the domain and the reports write: no 's is
// put after a name filled in, whatever the name.
func TestNoTextPutsApostropheSAfterAName(t *testing.T) {
	for _, dir := range []string{".", "../internal/qm", "../reports/showback", "../internal/policy"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "//") {
					continue
				}
				if m := possessiveOfName.FindString(line); m != "" {
					t.Errorf("%s:%d writes %s: say \"the X of team %%s\", which reads right for a name ending in s", f, i+1, m)
				}
			}
		}
	}
}
