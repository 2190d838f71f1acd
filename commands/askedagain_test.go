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

// A lease that was extended and ended offers to ask again for what was asked, its length before
// the extensions (granted at once or approved by a budget owner), in the Request again of its end
// and in the refusal to extend it once it has ended.
func TestAskAgainAsksForTheLengthAskedNotTheExtendedOne(t *testing.T) {
	const nils, olga = "nils@egret.example", "olga@egret.example"
	for _, tc := range []struct {
		name, ask, extend, want string
		approve                 bool
		runs                    time.Duration
	}{
		{"extended at once", "/gpu request 1 kestrel for 2h", "2h", "/gpu request 1 kestrel for 2h", false, 4 * time.Hour},
		{"extension approved", "/gpu request 1 kestrel for 6h data confidential", "4h", "/gpu request 1 kestrel for 6h data confidential", true, 10 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessOn(t, egretPolicy)
			id := leaseIn(t, mustOK(t, h.say(nils, tc.ask)).Text).String()
			r := mustOK(t, h.say(nils, "/gpu extend "+id+" "+tc.extend))
			if tc.approve {
				ext := leaseIn(t, r.Text[strings.Index(r.Text, " as ")+4:])
				mustOK(t, h.say(olga, "/gpu approve "+ext.String()))
			}
			h.notices(nils)
			h.advance(tc.runs + time.Minute)
			if again := againIn(t, h.notices(nils)); again != tc.want {
				t.Errorf("Request again of %s after it ran %s: %q; want %q", id, tc.runs, again, tc.want)
			}
			r = h.say(nils, "/gpu extend "+id+" 1h")
			if !r.Error || exampleIn(t, r) != tc.want {
				t.Errorf("extending %s after it ended: %q; want %s as the example", id, r.Text, tc.want)
			}
		})
	}
}
