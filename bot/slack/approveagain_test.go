package slack_test

import (
	"strings"
	"testing"
)

// A budget owner who presses Approve again on the card they decided with it, after the requester
// released the lease, is told of the decision they made then, with its time, as on Discord; not
// "Approved L-1 …; it is now released", as if the press had approved a released lease.
func TestApprovingAgainAfterAReleaseNamesTheEarlierDecision(t *testing.T) {
	e := newTuataraEnv(t)
	e.ask("UTAMA", "request 6 waka for 4h")
	card := e.approvalCopy("CHARAKEKECOMPUTE", "L-1")
	if got := e.press("UNGAIO", card, buttonLabelled(t, card, "Approve")); !strings.HasPrefix(got.Text, "Approved L-1 (tama@tuatara.example.nz for 6 × waka for 4h); it is now active.") {
		t.Fatalf("the first press answered %q", got.Text)
	}
	e.ask("UTAMA", "release L-1")
	got := e.press("UNGAIO", card, buttonLabelled(t, card, "Approve"))
	if want := "You approved L-1 (tama@tuatara.example.nz for 6 × waka for 4h) at "; !strings.HasPrefix(got.Text, want) || !strings.HasSuffix(got.Text, "; it is now released.") {
		t.Errorf("a press after L-1 was released answered %q; want %q…; it is now released.", got.Text, want)
	}
}
