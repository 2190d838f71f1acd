package policy

import (
	"strings"
	"testing"
)

// A list in a problem or warning agrees with how many it names: the one key discord has, the one
// channel a policy names.
func TestAListOfOneIsWrittenInTheSingular(t *testing.T) {
	pe := refusedOther(t, "directory:\n", "discord: {guild: \"1\"}\ndirectory:\n")
	wantProblem(t, pe, lineOf(t, strings.Replace(otherPolicy, "directory:\n", "discord: {guild: \"1\"}\ndirectory:\n", 1), "guild"), "discord has no key guild; its key is channels")

	src := strings.Replace(otherPolicy, "    data_classes: [open, phi-restricted]\n",
		"    data_classes: [open, phi-restricted]\n    channel: \"#genomics\"\n", 1)
	src = strings.Replace(src, "directory:\n", "discord:\n  channels:\n    \"#genome\": \"300000000000000001\"\ndirectory:\n", 1)
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w := warningText(p.Warnings); !strings.Contains(w, "; the policy's channel is #genomics") {
		t.Errorf("warnings:\n%s", w)
	}
}
