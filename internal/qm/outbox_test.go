package qm_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// courier is a notifier that records what it delivered, and can be told to fail or to hang.
type courier struct {
	mu     sync.Mutex
	got    []qm.Notice
	fail   bool
	hang   chan struct{} // when set, deliveries wait on it (a sender that stops mid-delivery)
	before func(qm.Notice) error
}

func (c *courier) Notify(ctx context.Context, n qm.Notice) { _ = c.NotifyChecked(ctx, n) }

func (c *courier) NotifyChecked(ctx context.Context, n qm.Notice) error {
	c.mu.Lock()
	hang, fail, before := c.hang, c.fail, c.before
	c.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if before != nil {
		if err := before(n); err != nil {
			return err
		}
	}
	if fail {
		return errors.New("the chat platform is unreachable")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, n)
	return nil
}

func (c *courier) delivered() []qm.Notice {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]qm.Notice(nil), c.got...)
}

// outboxService is a replica: its own service and clock over a shared store.
func outboxService(t *testing.T, p *policy.Policy, st *store.DB, clock *sim.Clock, name string, c *courier) *qm.Service {
	cl := sim.New(p, clock)
	return &qm.Service{Policy: p, Store: st, Clock: clock, Backend: cl, Telemetry: cl, Directory: p,
		Notifier: c, Outbox: st, SenderName: name, Logger: storetest.Logger(t)}
}

func eachStore(t *testing.T, fn func(t *testing.T, url string)) {
	for _, b := range []struct {
		name string
		url  func(testing.TB) string
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.url(t))
		})
	}
}

// Notices written at a moment when they cannot go out (the chat platform is down, or the process
// dies before sending) are delivered later by the sender loop of any replica, each once.
func TestNoticesSurviveAFailedDeliveryAndReachEveryone(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		p := manyTeamsPolicy(t, 8, "")
		st := storetest.Open(t, url)
		clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
		down := &courier{fail: true}
		a := outboxService(t, p, st, clock, "a", down)
		for i := 0; i < 8; i++ { // eight over-quota requests: each tells its budget owner
			out, err := a.Request(context.Background(), qm.LeaseRequest{User: fmt.Sprintf("u%02d@x.example", i), GPUs: 4, Class: "interactive", Duration: time.Hour})
			if err != nil || out.Lease.State != qm.PendingApproval {
				t.Fatalf("request %d: %v %+v", i, err, out)
			}
		}
		if n := len(down.delivered()); n != 0 {
			t.Fatalf("%d notices went out while the platform was down", n)
		}
		up := &courier{}
		b := outboxService(t, p, st, clock, "b", up)
		clock.Advance(time.Minute) // past the retry
		if _, err := b.DeliverNotices(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, n := range up.delivered() {
			got[n.To[0]]++
		}
		for i := 0; i < 8; i++ {
			if owner := fmt.Sprintf("boss%02d@x.example", i); got[owner] != 1 {
				t.Errorf("%s heard %d times of their team's request, want once", owner, got[owner])
			}
		}
		if _, err := b.DeliverNotices(context.Background()); err != nil || len(up.delivered()) != 8 {
			t.Errorf("a second pass sent more: %d notices, %v", len(up.delivered()), err)
		}
	})
}

// A sender that stops in the middle of a delivery (killed) holds its notices only until its claim
// lapses; then another replica sends them, and counts each as a possible repeat.
func TestALapsedClaimIsSentAgainAndCounted(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		p := manyTeamsPolicy(t, 2, "")
		st := storetest.Open(t, url)
		clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
		stuck := &courier{hang: make(chan struct{})}
		a := outboxService(t, p, st, clock, "a", stuck)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // long enough to claim on a busy machine
		defer cancel()
		if _, err := a.Request(ctx, qm.LeaseRequest{User: "u00@x.example", GPUs: 4, Class: "interactive", Duration: time.Hour}); err != nil {
			t.Fatal(err)
		}
		up := &courier{}
		b := outboxService(t, p, st, clock, "b", up)
		if n, _ := b.DeliverNotices(context.Background()); n != 0 {
			t.Fatalf("b took %d notices that a still held", n)
		}
		clock.Advance(qm.NoticeHold + time.Second)
		if n, err := b.DeliverNotices(context.Background()); n != 1 || err != nil {
			t.Fatalf("after a's claim lapsed b sent %d (%v), want 1", n, err)
		}
		if b.NoticeRepeats() != 1 {
			t.Errorf("repeats = %d, want 1", b.NoticeRepeats())
		}
	})
}

// The sender loop stops waiting on a delivery before the notice's claim lapses: a chat platform
// that holds a delivery (rate limits, a slow link) for longer than the claim would otherwise let
// another replica take the notice and send it too, while the first delivery still went out.
func TestTheSenderLoopGivesUpADeliveryBeforeItsClaimLapses(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		p := manyTeamsPolicy(t, 1, "")
		st := storetest.Open(t, url)
		clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
		a := outboxService(t, p, st, clock, "a", &courier{fail: true})
		if _, err := a.Request(context.Background(), qm.LeaseRequest{User: "u00@x.example", GPUs: 4, Class: "interactive", Duration: time.Hour}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Minute) // past the retry of the failed delivery
		type seen struct {
			deadline time.Time
			bounded  bool
		}
		got := make(chan seen, 1)
		b := outboxService(t, p, st, clock, "b", nil)
		b.Notifier = checkedFunc(func(ctx context.Context, n qm.Notice) error {
			d, ok := ctx.Deadline()
			got <- seen{d, ok}
			<-ctx.Done() // the platform holds the delivery
			return ctx.Err()
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		before := time.Now()
		go func() {
			defer close(done)
			_, _ = b.DeliverNotices(ctx)
		}()
		g := <-got
		cancel()
		<-done
		if !g.bounded {
			t.Fatal("the sender loop waits on a delivery without end: once the claim lapses another replica sends the notice too")
		}
		if claimed := time.Now(); !g.deadline.Before(claimed.Add(qm.NoticeHold)) || g.deadline.Before(before) {
			t.Fatalf("the delivery may run until %v, not within its claim (taken between %v and %v, held %v)", g.deadline, before, claimed, qm.NoticeHold)
		}
	})
}

// checkedFunc is a checked notifier from a function.
type checkedFunc func(ctx context.Context, n qm.Notice) error

func (f checkedFunc) Notify(ctx context.Context, n qm.Notice) { _ = f(ctx, n) }

func (f checkedFunc) NotifyChecked(ctx context.Context, n qm.Notice) error { return f(ctx, n) }

// Three replicas sending at once from one PostgreSQL database send every notice exactly once, and
// the notices to one recipient about one lease in the order they were written.
func TestThreeReplicasSendEachNoticeOnceInOrder(t *testing.T) {
	storetest.RequirePostgres(t)
	p := manyTeamsPolicy(t, 20, "")
	st := storetest.Open(t, storetest.Postgres(t))
	clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
	maker := outboxService(t, p, st, clock, "maker", &courier{fail: true})
	for i := 0; i < 20; i++ {
		out, err := maker.Request(context.Background(), qm.LeaseRequest{User: fmt.Sprintf("u%02d@x.example", i), GPUs: 4, Class: "interactive", Duration: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		// The owner decides at once: an edit ("decided") that must follow the request's post.
		if _, err := maker.Decide(context.Background(), fmt.Sprintf("boss%02d@x.example", i), out.Lease.ID, false, "not now"); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Minute)
	var mu sync.Mutex
	seen := map[string]int{}
	var order []qm.Notice
	var wg sync.WaitGroup
	for r := 0; r < 3; r++ {
		c := &courier{before: func(n qm.Notice) error {
			mu.Lock()
			defer mu.Unlock()
			seen[fmt.Sprintf("%s/%s/%s", n.Lease.ID, n.Kind, n.To[0])]++
			order = append(order, n)
			return nil
		}}
		svc := outboxService(t, p, st, clock, fmt.Sprintf("r%d", r), c)
		wg.Go(func() {
			for i := 0; i < 20; i++ {
				if _, err := svc.DeliverNotices(context.Background()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	// Per lease: the request and the decision to its owner, the denial to the requester (this
	// policy names no team channels).
	if len(seen) != 20*3 {
		t.Errorf("%d distinct notices delivered, want %d", len(seen), 20*3)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s delivered %d times", k, n)
		}
	}
	last := map[string]qm.NoticeKind{}
	for _, n := range order {
		k := n.Lease.ID.String() + "/" + n.To[0]
		if n.Kind == qm.NoticeApprovalRequest && last[k] == qm.NoticeDecided {
			t.Errorf("%s: the decision reached %s before the request it edits", n.Lease.ID, n.To[0])
		}
		last[k] = n.Kind
	}
}

// TestACommandDoesNotWaitForTheNoticesItCaused: with notices delivered in the background (as
// serve does), an over-quota request is answered while its budget owner's notice is still on its
// way (here: the chat platform hangs), and the notice arrives once the platform answers.
func TestACommandDoesNotWaitForTheNoticesItCaused(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		p := manyTeamsPolicy(t, 2, "")
		st := storetest.Open(t, url)
		clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
		slow := &courier{hang: make(chan struct{})}
		a := outboxService(t, p, st, clock, "a", slow)
		a.DeliverInBackground = true
		answered := make(chan error, 1)
		go func() {
			out, err := a.Request(context.Background(), qm.LeaseRequest{User: "u00@x.example", GPUs: 4, Class: "interactive", Duration: time.Hour})
			if err == nil && out.Lease.State != qm.PendingApproval {
				err = fmt.Errorf("state %s, want waiting for approval", out.Lease.State)
			}
			answered <- err
		}()
		select {
		case err := <-answered:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			close(slow.hang)
			t.Fatal("the request was not answered while its budget owner's notice could not go out")
		}
		if n := len(slow.delivered()); n != 0 {
			t.Fatalf("%d notices delivered while the platform hung", n)
		}
		close(slow.hang)
		if err := a.WaitNotices(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := slow.delivered()
		if len(got) != 1 || got[0].To[0] != "boss00@x.example" {
			t.Fatalf("delivered %+v, want one notice to boss00@x.example", got)
		}
	})
}

// flakyOutbox is the store as an outbox whose first failing-delivery records fail, as while the
// database restarts.
type flakyOutbox struct {
	qm.Outbox
	mu   sync.Mutex
	down int // NoticeFailed calls still to fail
}

func (f *flakyOutbox) NoticeFailed(ctx context.Context, id int64, retry time.Time, why string) error {
	f.mu.Lock()
	if f.down > 0 {
		f.down--
		f.mu.Unlock()
		return errors.New("the database cannot be reached")
	}
	f.mu.Unlock()
	return f.Outbox.NoticeFailed(ctx, id, retry, why)
}

// A notice whose delivery failed while the database could not record the failure either is
// given back once the database takes it again, and goes out at its retry, not only when its
// claim lapses (two minutes later).
func TestAFailedDeliveryIsGivenBackWhenTheDatabaseReturns(t *testing.T) {
	p := manyTeamsPolicy(t, 1, "")
	st := storetest.Open(t, storetest.SQLite(t))
	clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
	down := &courier{fail: true}
	a := outboxService(t, p, st, clock, "a", down)
	a.Outbox = &flakyOutbox{Outbox: st, down: 2}
	if out, err := a.Request(context.Background(), qm.LeaseRequest{User: "u00@x.example", GPUs: 4, Class: "interactive", Duration: time.Hour}); err != nil || out.Lease.State != qm.PendingApproval {
		t.Fatalf("request: %v %+v", err, out)
	}
	up := &courier{}
	b := outboxService(t, p, st, clock, "b", up)
	clock.Advance(30 * time.Second) // past the first retry (2 s), well within the claim (2 min)
	deadline := time.Now().Add(10 * time.Second)
	for len(up.delivered()) == 0 && time.Now().Before(deadline) {
		if _, err := b.DeliverNotices(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := len(up.delivered()); n != 1 {
		t.Fatalf("%d notices delivered 30 s after the failed one, want the approval request given back and sent", n)
	}
}

// A notice that cannot be delivered is tried again for about a day, so that a chat platform's
// outage of some hours loses nothing; one that has failed for longer is given up.
func TestANoticeIsTriedForAboutADay(t *testing.T) {
	for _, outage := range []time.Duration{20 * time.Hour, 26 * time.Hour} {
		t.Run(outage.String(), func(t *testing.T) {
			p := manyTeamsPolicy(t, 1, "")
			st := storetest.Open(t, storetest.SQLite(t))
			clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
			c := &courier{fail: true}
			svc := outboxService(t, p, st, clock, "a", c)
			if out, err := svc.Request(context.Background(), qm.LeaseRequest{User: "u00@x.example", GPUs: 4, Class: "interactive", Duration: time.Hour}); err != nil || out.Lease.State != qm.PendingApproval {
				t.Fatalf("request: %v %+v", err, out)
			}
			start := clock.Now()
			for clock.Now().Sub(start) < 30*time.Hour {
				if clock.Now().Sub(start) >= outage {
					c.mu.Lock()
					c.fail = false
					c.mu.Unlock()
				}
				if _, err := svc.DeliverNotices(context.Background()); err != nil {
					t.Fatal(err)
				}
				clock.Advance(5 * time.Minute)
			}
			got := len(c.delivered())
			if outage < 24*time.Hour && got != 1 {
				t.Errorf("after an outage of %s the budget owner heard %d times, want once", outage, got)
			}
			if outage > 25*time.Hour && got != 0 {
				t.Errorf("a notice that failed for %s was still sent (%d)", outage, got)
			}
		})
	}
}

// Notices to one recipient written together (what a change of someone's groups tells them: that
// their sign-in was revoked, and what becomes of their team's leases) go out at once and in
// order, not one per pass of the sender loop.
func TestNoticesToOneRecipientWrittenTogetherGoOutAtOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		p := manyTeamsPolicy(t, 1, "")
		st := storetest.Open(t, url)
		clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
		c := &courier{}
		a := outboxService(t, p, st, clock, "a", c)
		var ns []qm.Notice
		for i := range 3 {
			ns = append(ns, qm.Notice{Kind: qm.NoticeMessage, To: []string{"u00@x.example"}, Message: []byte(fmt.Sprintf(`{"text":"part %d"}`, i))})
		}
		var ids []int64
		if err := st.Update(context.Background(), nil, func(tx qm.Tx) (err error) {
			ids, err = tx.AddNotices(context.Background(), ns, clock.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
		a.SendQueued(context.Background(), ids)
		got := c.delivered()
		if len(got) != 3 {
			t.Fatalf("%d of the 3 notices went out at once", len(got))
		}
		for i, n := range got {
			if want := fmt.Sprintf(`{"text":"part %d"}`, i); string(n.Message) != want {
				t.Errorf("notice %d: %s, want %s", i, n.Message, want)
			}
		}
	})
}
