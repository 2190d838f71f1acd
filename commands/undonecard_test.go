package commands

import (
	"strings"
	"testing"
	"time"
)

const egretPolicy = "testdata/egret.yaml"

// A request that will not happen (withdrawn as its lease ended, cancelled by its requester,
// expired undecided or denied) leaves an approval card that does not project the team's week
// forward as if it still might: what it would have taken is said in the past.
func TestACardOfARequestThatWillNotHappenSpeaksInThePast(t *testing.T) {
	const nils, olga = "nils@egret.example", "olga@egret.example"
	future := "It would take team vision"
	for _, tc := range []struct {
		name string
		do   func(h *harness) (id, want string)
	}{
		{"withdrawn extension", func(h *harness) (string, string) {
			run := leaseIn(t, mustOK(t, h.say(nils, "/gpu request 2 kestrel for 6h")).Text)
			ask := mustOK(t, h.say(nils, "/gpu extend "+run.String()+" 6h")).Text
			ext := leaseIn(t, ask[strings.Index(ask, " as ")+4:])
			h.notices(olga)
			h.advance(6 * time.Hour)
			return ext.String(), "was withdrawn"
		}},
		{"cancelled request", func(h *harness) (string, string) {
			mustOK(t, h.say(nils, "/gpu request 2 kestrel for 8h"))
			id := leaseIn(t, mustOK(t, h.say(nils, "/gpu request 1 kestrel for 5h")).Text)
			h.notices(olga)
			mustOK(t, h.say(nils, "/gpu cancel "+id.String()))
			return id.String(), "was withdrawn"
		}},
		{"timed-out request", func(h *harness) (string, string) {
			mustOK(t, h.say(nils, "/gpu request 2 kestrel for 8h"))
			id := leaseIn(t, mustOK(t, h.say(nils, "/gpu request 1 kestrel for 5h")).Text)
			h.notices(olga)
			h.advance(25 * time.Hour)
			return id.String(), "expired undecided"
		}},
		{"denied request", func(h *harness) (string, string) {
			mustOK(t, h.say(nils, "/gpu request 2 kestrel for 8h"))
			id := leaseIn(t, mustOK(t, h.say(nils, "/gpu request 1 kestrel for 5h")).Text)
			h.notices(olga)
			mustOK(t, h.say(olga, "/gpu deny "+id.String()+" not this week"))
			return id.String(), "was denied by"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessOn(t, egretPolicy)
			id, want := tc.do(h)
			card := approvalCard(h, olga, id)
			if !strings.Contains(card, want) {
				t.Fatalf("the edited card of %s: %q; want it to say %q", id, card, want)
			}
			if strings.Contains(card, future) {
				t.Errorf("the edited card of %s still projects the week forward: %q", id, card)
			}
			if !strings.Contains(card, "It would have taken team vision to ") {
				t.Errorf("the edited card of %s does not say what it would have taken: %q", id, card)
			}
		})
	}
}
