package showback_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/schedule"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/reports/showback"
)

// keepingChat keeps what it delivered, and refuses those it cannot reach.
type keepingChat struct {
	unreachable map[string]bool
	got         map[string]bot.Reply
}

func (c *keepingChat) Deliver(_ context.Context, r bot.Reply) error {
	if c.unreachable[r.To] {
		return fmt.Errorf("slack: cannot reach %s: users_not_found", r.To)
	}
	c.got[r.To] = r
	return nil
}

func field(r bot.Reply, section, label string) string {
	for _, s := range r.Sections {
		if s.Title != section {
			continue
		}
		for _, f := range s.Fields {
			if f.Label == label {
				return f.Value
			}
		}
	}
	return ""
}

// A week's messages tell the same week whichever run sends them: a budget owner's message that
// a later run sends (the first could not reach them) says what the channel post said, not what
// happened since. Here a request asked on the week's last evening was still waiting when the week
// was posted, and approved before the owner's message went out.
func TestAWeeksMessagesAgreeWhicheverRunSendsThem(t *testing.T) {
	pol := loadAdelaide(t)
	db := storetest.Open(t, storetest.SQLite(t))
	week := showback.Week{Year: 2026, Num: 47}
	from := week.Start(pol.Location)
	asked := from.Add(6*24*time.Hour + 22*time.Hour) // Sunday 22 Nov 22:00 ACDT
	pending := &qm.Lease{User: "al@sc.example", Team: "alpha", Class: "nb", GPUs: 2, Duration: 2 * time.Hour, State: qm.PendingApproval,
		Rules: "too-many", CreatedAt: asked}
	used := &qm.Lease{User: "al@sc.example", Team: "alpha", Class: "nb", GPUs: 1, State: qm.Expired,
		CreatedAt: from.Add(time.Hour), StartedAt: from.Add(time.Hour), ExpiresAt: from.Add(3 * time.Hour), EndedAt: from.Add(3 * time.Hour)}
	if err := db.Update(t.Context(), nil, func(tx qm.Tx) error {
		if err := tx.CreateLease(t.Context(), used); err != nil {
			return err
		}
		return tx.CreateLease(t.Context(), pending)
	}); err != nil {
		t.Fatal(err)
	}
	sched, err := schedule.ParseWeekly(pol.Reports.Showback.Schedule, pol.Location)
	if err != nil {
		t.Fatal(err)
	}
	posting := sched.Next(week.End(pol.Location)) // Tuesday 24 Nov 07:30 ACDT
	fc := clockwork.NewFakeClockAt(posting)
	chat := &keepingChat{unreachable: map[string]bool{"ann@sc.example": true}, got: map[string]bot.Reply{}}
	pub := &showback.Publisher{Reports: &showback.Service{Policy: pol, Source: db, Clock: fc}, Ledger: db, Deliver: chat,
		Schedule: sched, Owner: "a", ClaimTTL: 15 * time.Minute}
	if posted, err := pub.Publish(t.Context(), week); posted || err == nil {
		t.Fatalf("Publish with ann unreachable: posted %v, %v; want an error", posted, err)
	}
	post, ok := chat.got["#showback"]
	if !ok {
		t.Fatal("the first run posted nothing to #showback")
	}
	said := field(post, "This week", "Approvals")

	// ann approves the request at 08:00; at 08:05 the next run reaches her.
	fc.Advance(30 * time.Minute)
	if err := db.Update(t.Context(), nil, func(tx qm.Tx) error {
		l, err := tx.GetLease(t.Context(), pending.ID)
		if err != nil {
			return err
		}
		l.State, l.DecidedBy, l.DecidedAt = qm.Active, "ann@sc.example", fc.Now()
		l.StartedAt, l.ExpiresAt = fc.Now(), fc.Now().Add(2*time.Hour)
		return tx.UpdateLease(t.Context(), l, qm.PendingApproval)
	}); err != nil {
		t.Fatal(err)
	}
	delete(chat.unreachable, "ann@sc.example")
	fc.Advance(5 * time.Minute)
	if posted, err := pub.Publish(t.Context(), week); !posted || err != nil {
		t.Fatalf("Publish once ann is reachable: posted %v, %v", posted, err)
	}
	dm, ok := chat.got["ann@sc.example"]
	if !ok {
		t.Fatal("the second run sent ann nothing")
	}
	if got := field(dm, "Team alpha", "Approvals"); got != said {
		t.Errorf("ann's message, sent by the second run, says of the week's approvals %q; the channel post said %q", got, said)
	}
}
