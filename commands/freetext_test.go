package commands

import (
	"strings"
	"testing"
)

// A data class is one word such as internal: one that is no word (very long, or with markup) is
// refused before anything is made, and a team whose policy writes its data classes in capitals is
// granted its own data class without approval.
func TestADataClassIsOneWord(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	for _, dc := range []string{strings.Repeat("d", 5000), "<!channel>", "@everyone", "x\u202e"} {
		r := h.say("rita@borealis.example", "/gpu request 1 dev for 1h data "+dc)
		if !r.Error || !strings.Contains(r.Text, "is not a data class; a data class is one word") || len(r.Text) > 300 {
			t.Errorf("data class %.20q: %s", dc, r.Text)
		}
	}
	if got := h.say("rita@borealis.example", "/gpu list").Text; !strings.Contains(got, "no leases") {
		t.Errorf("refused requests made leases: %s", got)
	}

	h = newHarnessOn(t, policyVariant(t, otherPolicy,
		"    data_classes: [open]\n    storage: {path: /data/robotics", "    data_classes: [Open, PII]\n    storage: {path: /data/robotics",
		"exceptions:\n", "exceptions:\n  - {name: data, when: \"!(request.data_class in team.data_classes)\", why: Not cleared for this data class}\n"))
	for _, line := range []string{"/gpu request 1 dev for 1h", "/gpu request 1 dev for 1h data pii", "/gpu request 1 dev for 1h data PII"} {
		if r := h.say("rita@borealis.example", line); r.Error || !strings.Contains(r.Text, "is active") {
			t.Errorf("%s by a team cleared for [Open, PII]: %s", line, r.Text)
		}
	}
}
