package commands

import (
	"strings"
	"testing"
)

const himalPolicy = "testdata/himal.yaml"

// TestTheCatalogSaysWhatTheAskersEmailGetsWithoutApproval: a rule on the address of whoever
// asks (user.name.endsWith('@vendor.example')) sends every request of an outside firm's staff to
// a budget owner, as a rule on their groups does. /gpu catalog and /gpu policy told them what a
// plain member of their team gets (up to 1 GPU for up to 3h), and every request they made waited.
func TestTheCatalogSaysWhatTheAskersEmailGetsWithoutApproval(t *testing.T) {
	h := newHarnessOn(t, himalPolicy)
	const vendor, member = "dawa@vendor.example", "karma@himal.example"
	if got, want := withoutApprovalOf(t, h, vendor, "sketch"), "none for you: rule vendor sends every request of yours to a budget owner"; got != want {
		t.Errorf("the vendor's catalog says %q for sketch; want %q", got, want)
	}
	if got, want := withoutApprovalOf(t, h, member, "sketch"), "up to 1 GPU for up to 3h"; got != want {
		t.Errorf("a member's catalog says %q for sketch; want %q", got, want)
	}
	pol := mustOK(t, h.say(vendor, "/gpu policy")).PlainText()
	if want := "sketch: T4 shared, 0.35 CHF/GPU-hour, nothing without approval for you: rule vendor sends every request of yours to a budget owner"; !strings.Contains(pol, want) {
		t.Errorf("the vendor's /gpu policy:\n%s\nwant %q", pol, want)
	}
	// What the catalog says is what happens.
	r := mustOK(t, h.say(vendor, "/gpu request 1 sketch for 1h"))
	if !strings.Contains(r.Text, "waits for approval") || !strings.Contains(r.Text, "vendor") {
		t.Errorf("the vendor's request: %q; want it to wait under rule vendor", r.Text)
	}
}
