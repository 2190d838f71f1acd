package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
)

// againIn is the Request again button of the first of rs that has one.
func againIn(t *testing.T, rs []bot.Reply) string {
	t.Helper()
	for _, r := range rs {
		for _, a := range r.Actions {
			if a.Label == "Request again" {
				return a.Command
			}
		}
	}
	t.Fatalf("no Request again button in %v", rs)
	return ""
}

// Request again asks for the lease as it was asked: a lease charged to the asker's second team
// is asked for again for that team, and one of a data class that needs approval is asked for
// with that data class, so that it waits for a budget owner again rather than starting at once
// under the team's own data class.
func TestRequestAgainAsksForTheSameTeamDataClassAndTemplate(t *testing.T) {
	h := templatesOn(t, policyVariant(t, kolkataPolicy,
		"{user: bo@kestrel.example, groups: [grp-geno, pii-cleared]}", "{user: bo@kestrel.example, groups: [grp-geno, pii-cleared, grp-nlp]}"))
	mustOK(t, h.say("bo@kestrel.example", "/gpu request 1 nb-t4 for 1h team nlp template jupyterlab"))
	h.advance(61 * time.Minute)
	again := againIn(t, h.notices("bo@kestrel.example"))
	if !strings.Contains(again, " team nlp") || !strings.Contains(again, " template jupyterlab") {
		t.Errorf("Request again of nlp's JupyterLab: %q", again)
	}
	r := mustOK(t, h.say("bo@kestrel.example", again))
	if l, err := h.svc.Get(t.Context(), leaseIn(t, r.Text[strings.Index(r.Text, "L-"):])); err != nil || l.Team != "nlp" || l.Template != "jupyterlab" {
		t.Errorf("%s made %+v, %v; want nlp's JupyterLab", again, l, err)
	}

	r = mustOK(t, h.say("ayu@kestrel.example", "/gpu request 1 a6000-2x for 1h data pii"))
	if !strings.Contains(r.Text, "pii-data") {
		t.Fatalf("pii without clearance waits for approval: %q", r.Text)
	}
	h.advance(6*time.Hour + time.Minute) // the approval timeout
	again = againIn(t, h.notices("ayu@kestrel.example"))
	if !strings.Contains(again, " data pii") {
		t.Errorf("ask again after a pii request timed out: %q", again)
	}
	if r := mustOK(t, h.say("ayu@kestrel.example", again)); !strings.Contains(r.Text, "waits for approval") {
		t.Errorf("%s: %q, want it to wait for approval as the first did", again, r.Text)
	}
}
