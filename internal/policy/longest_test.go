package policy

import (
	"strings"
	"testing"
)

// TestPolicyCheckWarnsOfAMaxDurationNoLeaseReaches: no lease lasts longer than 30 days, approved
// or not, so a class whose max_duration is longer promises in the catalog what every request
// beyond 30 days is refused; policy check says so at the class's max_duration, and 30 days is fine.
func TestPolicyCheckWarnsOfAMaxDurationNoLeaseReaches(t *testing.T) {
	src := exampleWith(t, "max_duration: 72h", "max_duration: 6w")
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := "the max_duration of class train is 42d, but no lease lasts longer than 30d, approved or not, so a request for more is refused though the catalog offers it; write max_duration: 30d or less"
	found := false
	for _, w := range p.Warnings {
		if w.Msg == want && strings.Contains(strings.Split(src, "\n")[w.Line-1], "max_duration: 6w") {
			found = true
		}
	}
	if !found {
		t.Errorf("want %q at the line of train's max_duration; got:\n%s", want, warningText(p.Warnings))
	}
	if p, err = Load([]byte(exampleWith(t, "max_duration: 72h", "max_duration: 30d")), "p.yaml"); err != nil || len(p.Warnings) != 0 {
		t.Errorf("max_duration: 30d: %v, warnings:\n%s", err, warningText(p.Warnings))
	}
}
