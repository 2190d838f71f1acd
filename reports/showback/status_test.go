package showback_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/schedule"
	"github.com/acme/quartermaster/reports/showback"
)

// What the service's metrics read of the weekly showback: each message tried, by kind and
// whether the chat took it (a budget owner it cannot reach is a DM that failed), how many due
// weeks are not posted in full, and the end of the latest week that is. A week held back by an
// unreachable owner counts as not posted until its last message goes out; then it is the week
// posted through.
func TestTheShowbacksStatusSaysWhatWasPostedAndWhatFailed(t *testing.T) {
	pol, db, w := borealisWeekOfOneLease(t)
	// Friday 13 March, 17:00: the post of 2026-W10 was due at 16:00.
	fc := clockwork.NewFakeClockAt(time.Date(2026, 3, 13, 17, 0, 0, 0, pol.Location))
	chat := &refusingChat{unreachable: map[string]bool{"olga@borealis.example": true}}
	tried := map[string]int{}
	pub := &showback.Publisher{Reports: &showback.Service{Policy: pol, Source: db, Clock: fc}, Ledger: db, Deliver: chat,
		Schedule: w, Owner: "a", ClaimTTL: 15 * time.Minute,
		Delivered: func(kind string, err error) { tried[fmt.Sprintf("%s %v", kind, err != nil)]++ }}

	st, err := pub.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.Unposted != 1 || !st.PostedThrough.IsZero() {
		t.Errorf("before the run: %+v; want 1 week unposted and none posted", st)
	}
	if err := pub.RunDue(t.Context()); err == nil {
		t.Fatal("the run with olga unreachable reported no error")
	}
	// The channel post, and the DMs of pete, sven and vera went out; olga's did not.
	if want := map[string]int{"channel false": 1, "dm false": 3, "dm true": 1}; fmt.Sprint(tried) != fmt.Sprint(want) {
		t.Errorf("the run tried %v; want %v", tried, want)
	}
	if st, err = pub.Status(t.Context()); err != nil || st.Unposted != 1 || !st.PostedThrough.IsZero() {
		t.Errorf("after a run that could not reach olga: %+v, %v; want 1 week unposted and none posted", st, err)
	}

	delete(chat.unreachable, "olga@borealis.example")
	clear(tried)
	fc.Advance(5 * time.Minute)
	if err := pub.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"dm false": 1}; fmt.Sprint(tried) != fmt.Sprint(want) {
		t.Errorf("the run once olga was back tried %v; want %v (her DM alone)", tried, want)
	}
	st, err = pub.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// 2026-W10 ends on Monday 9 March, 00:00 in the policy's zone.
	if want := time.Date(2026, 3, 9, 0, 0, 0, 0, pol.Location); st.Unposted != 0 || !st.PostedThrough.Equal(want) {
		t.Errorf("after the week went out: %+v; want none unposted and posted through %v", st, want)
	}
}

// stoppingChat is the chat of a replica told to stop while it delivers: the delivery gives up
// with the run's context.
type stoppingChat struct{ stop context.CancelFunc }

func (c stoppingChat) Deliver(ctx context.Context, _ bot.Reply) error {
	c.stop()
	return ctx.Err()
}

// A message left unsent because the replica was stopping is no message the chat refused: it is
// not counted as failed (it goes out at the next run).
func TestAMessageLeftByAStoppingReplicaIsNotCountedFailed(t *testing.T) {
	p, err := policy.Load([]byte(groupOwnersPolicy), "weir.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := showback.ParseWeek("2026-W10", showback.Week{})
	from := w.Start(p.Location)
	sched, err := schedule.ParseWeekly(p.Reports.Showback.Schedule, p.Location)
	if err != nil {
		t.Fatal(err)
	}
	st := from.Add(time.Hour)
	leases := []*qm.Lease{{ID: 1, User: "u@weir.example", Team: "sluice", Class: "flume", GPUs: 1, State: qm.Expired,
		CreatedAt: st, StartedAt: st, ExpiresAt: st.Add(2 * time.Hour), EndedAt: st.Add(2 * time.Hour)}}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var tried []string
	pub := &showback.Publisher{Reports: &showback.Service{Policy: p, Source: fixedSource{leases}, Clock: fixedClock(from.Add(8 * 24 * time.Hour))},
		Ledger: &memLedger{}, Deliver: stoppingChat{cancel}, Schedule: sched, Owner: "r1",
		Delivered: func(kind string, err error) { tried = append(tried, fmt.Sprintf("%s %v", kind, err)) }}
	if posted, err := pub.Publish(ctx, w); posted || err == nil {
		t.Fatalf("Publish while stopping = %v, %v; want the week left unposted", posted, err)
	}
	if len(tried) != 0 {
		t.Errorf("a stopping replica's messages were counted: %v", tried)
	}
}
