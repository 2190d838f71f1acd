package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// The edited approval card (the decision, to the approvers and the team's channel) says the lease
// as it stands when the card goes out, not as it stood when the decision was written to the
// outbox: on Slurm an approved lease is still being started then, and is running by the time
// the card is delivered, as the approver's own reply says.
func TestTheDecidedCardSaysTheLeaseAsItStandsWhenItGoesOut(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	id := leaseIn(t, h.say("rita@borealis.example", "/gpu request 3 dev for 2h").Text)
	if r := h.say("olga@borealis.example", "/gpu approve "+id.String()); r.Error {
		t.Fatal(r.Text)
	}
	now := h.lease(id)
	if now.State != qm.Active {
		t.Fatalf("approved lease is %s", now.State)
	}
	// The decision as the outbox keeps it: written while the lease was being started.
	then := *now
	then.State, then.Node, then.Connect, then.StartedAt = qm.Provisioning, "", "", now.DecidedAt
	then.Reason = "approved by olga@borealis.example"
	rs := h.bot.RenderNotice(context.Background(), qm.Notice{Kind: qm.NoticeDecided, To: []string{"#robotics-gpu"}, Lease: &then, Actor: "olga@borealis.example"})
	if len(rs) == 0 || len(rs[0].Sections) == 0 {
		t.Fatalf("decided card: %+v", rs)
	}
	card := rs[0].PlainText()
	if !strings.Contains(card, "State: active") || strings.Contains(card, "provisioning") || strings.Contains(card, "starting") {
		t.Errorf("the decided card of a lease that runs now:\n%s\nwant it active, not being started", card)
	}
}
