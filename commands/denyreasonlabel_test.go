package commands

import (
	"strings"
	"testing"
)

// A denial's reason that opens with the bare word reason or because, more words after it (reason
// too big, Because the nodes are booked), is read as the marked forms are (reason: …): the word is
// a label, and the words after it the reason; before, the requester read "denied by …: reason too
// big". A reason that says "because of …", or a word that only starts so (reasonable), is kept
// as typed. The lead word alone, marked or not (reason, Reason:, because -), is the label of a
// reason that was not written, not a reason: the denial has none, as /gpu deny L-1 has, and as
// Discord reads its reason option left empty (deny lease:L-1 reason:); before, the requester read
// "denied by …: reason:.".
func TestADenialsReasonAfterABareLeadWordDropsTheWord(t *testing.T) {
	h := kelpOn(t)
	const who, owner = "mara@kelp.example", "rua@kelp.example"
	for _, tc := range []struct{ typed, reason string }{
		{"reason too big", "too big"},
		{"REASON the abyss nodes are booked", "the abyss nodes are booked"},
		{"Because brine runs first this week", "brine runs first this week"},
		{"because of the silt migration", "because of the silt migration"},
		{"reason", "no reason given"},
		{"Reason:", "no reason given"},
		{"because -", "no reason given"},
		{"BECAUSE", "no reason given"},
		{"reasonably, no", "reasonably, no"},
	} {
		id := leaseIn(t, h.say(who, "/gpu request 5 tidal for 1h team reef").Text).String()
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
