package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// TestTheCatalogSaysWhatTheAskersOwnGroupsGetWithoutApproval: a contractor, whom the rule
// verktaki ('verktakar' in user.groups) sends to a budget owner whatever they ask, read in
// /gpu catalog and /gpu policy that l40s gives "up to 1 GPU for up to 6h" without approval,
// what a plain member of their team gets, and every request they made waited. The catalog and
// the policy say what the asker gets, as their own groups are answered; a plain member still
// reads the class's limits.
func TestTheCatalogSaysWhatTheAskersOwnGroupsGetWithoutApproval(t *testing.T) {
	h := newHarnessOn(t, stJohnsPolicy)
	const verk, jon = "verk@ytri.example", "jón@lab.example"
	if got, want := withoutApprovalOf(t, h, verk, "l40s"), "none for you: rule verktaki sends every request of yours to a budget owner"; got != want {
		t.Errorf("the contractor's catalog says %q for l40s; want %q", got, want)
	}
	if got, want := withoutApprovalOf(t, h, jon, "l40s"), "up to 1 GPU for up to 6h"; got != want {
		t.Errorf("a member's catalog says %q for l40s; want %q", got, want)
	}
	pol := mustOK(t, h.say(verk, "/gpu policy")).PlainText()
	if want := "l40s: L40S shared, 125 ISK/GPU-hour, nothing without approval for you: rule verktaki sends every request of yours to a budget owner"; !strings.Contains(pol, want) {
		t.Errorf("the contractor's /gpu policy:\n%s\nwant %q", pol, want)
	}
	// What the catalog says is what happens.
	r := mustOK(t, h.say(verk, "/gpu request 1 l40s for 1h"))
	if !strings.Contains(r.Text, "waits for approval") || !strings.Contains(r.Text, "verktaki") {
		t.Errorf("the contractor's request: %q; want it to wait under rule verktaki", r.Text)
	}
}

// withoutApproval is what the catalog r says a class gives without approval ("" where it has no
// such field).
func withoutApproval(r bot.Reply, class string) string {
	for _, s := range r.Sections {
		if strings.HasPrefix(s.Title, class+" ") {
			for _, f := range s.Fields {
				if f.Label == "Without approval" {
					return f.Value
				}
			}
		}
	}
	return ""
}
