package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
)

// A request of a misspelled data class that expires undecided is denied with the request to ask
// again as it was meant, with the data class its reply already put right: copied, it asks for a
// data class the team is cleared for and starts, rather than waiting for a budget owner again.
func TestAskAgainAfterATimeoutPutsADataClassTypoRight(t *testing.T) {
	h := newHarnessOn(t, egretPolicy)
	const nils = "nils@egret.example"
	mustOK(t, h.say(nils, "/gpu request 1 kestrel for 2h data confidental"))
	h.notices(nils)
	h.advance(25 * time.Hour)
	const want = "/gpu request 1 kestrel for 2h data confidential"
	var denial bot.Reply
	for _, r := range h.notices(nils) {
		if strings.Contains(r.Text, "was denied") {
			denial = r
		}
	}
	if !strings.Contains(denial.Text, "ask again with "+want+".") {
		t.Errorf("the denial after the timeout: %q; want it to ask again with %s", denial.Text, want)
	}
	again := againIn(t, []bot.Reply{denial})
	if again != want {
		t.Errorf("Request again after the timeout is %q; want %q", again, want)
	}
	if r := mustOK(t, h.say(nils, again)); strings.Contains(r.Text, "waits for approval") || strings.Contains(r.Text, "did you mean") {
		t.Errorf("%s answered %q; want it granted", again, r.Text)
	}
}
