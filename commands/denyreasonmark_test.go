package commands

import (
	"strings"
	"testing"
)

// A denial whose reason opens with the word reason or because and a mark (reason: …, Because -
// …) keeps the words after the mark as its reason, as a quota request's because: does; before,
// the requester read "denied by …: reason: …".
func TestADenialsReasonWithALeadWordKeepsTheWordsAfterIt(t *testing.T) {
	h := kelpOn(t)
	const who, owner = "mara@kelp.example", "olin@kelp.example"
	for _, tc := range []struct{ typed, reason string }{
		{"reason: too big this week", "too big this week"},
		{"Reason - the abyss nodes are booked", "the abyss nodes are booked"},
		{"because: ask for 4", "ask for 4"},
		{"reasonable, but not now", "reasonable, but not now"},
	} {
		id := leaseIn(t, h.say(who, "/gpu request 5 tidal for 1h").Text).String()
		h.notices(who)
		mustOK(t, h.say(owner, "/gpu deny "+id+" "+tc.typed))
		var told string
		for _, n := range h.notices(who) {
			told += n.Text
		}
		if want := "denied by " + owner + ": " + tc.reason + "."; !strings.Contains(told, want) {
			t.Errorf("/gpu deny %s %s: the requester was told %q; want %q", id, tc.typed, told, want)
		}
	}
}
