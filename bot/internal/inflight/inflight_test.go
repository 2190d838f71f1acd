package inflight

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/testkit"
)

// TestSeen: a key is new once within its time to live, and new again after; an empty key is
// always new.
func TestSeen(t *testing.T) {
	now := time.Unix(1000, 0)
	s := NewSeen()
	s.Now = func() time.Time { return now }
	if !s.First("a") || s.First("a") || !s.First("b") || !s.First("") || !s.First("") {
		t.Fatal("first seen wrong")
	}
	now = now.Add(SeenTTL + time.Second)
	if !s.First("a") || s.First("a") {
		t.Fatal("an expired key is not new again")
	}
	if len(s.at) != 1 {
		t.Errorf("%d keys remembered, want 1 (b expired)", len(s.at))
	}
}

// TestSeenForgetsTheOldestPastItsBound: the memory stays bounded however many keys arrive within
// the time to live, and it is the oldest that is forgotten.
func TestSeenForgetsTheOldestPastItsBound(t *testing.T) {
	s := NewSeen()
	for i := range SeenMax + 10 {
		if !s.First(strconv.Itoa(i)) {
			t.Fatalf("key %d not new", i)
		}
	}
	if len(s.at) > SeenMax {
		t.Fatalf("%d keys remembered, want at most %d", len(s.at), SeenMax)
	}
	if !s.First("0") {
		t.Error("the oldest key was not forgotten")
	}
	if s.First(strconv.Itoa(SeenMax + 9)) {
		t.Error("the newest key was forgotten")
	}
}

// TestTrackerWaitsForWorkInFlight: Wait returns once every piece of work is done, and with the
// context's error when it ends first.
func TestTrackerWaitsForWorkInFlight(t *testing.T) {
	tr := NewTracker()
	if err := tr.Wait(context.Background()); err != nil {
		t.Fatalf("nothing in flight: %v", err)
	}
	tr.Add()
	tr.Add()
	waited := make(chan error, 1)
	go func() { waited <- tr.Wait(context.Background()) }()
	tr.Done()
	select {
	case err := <-waited:
		t.Fatalf("Wait returned (%v) with work still in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	tr.Done()
	if err := <-waited; err != nil {
		t.Fatalf("Wait after all is done: %v", err)
	}

	tr.Add()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { waited <- tr.Wait(ctx) }()
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with the context ended: %v, want context.Canceled", err)
	}
}

// TestGoBoundsTimeAndSurvivesAPanic: the work gets a context that ends after its timeout, is
// counted until it returns, and a panic in it is logged with what panicked instead of taking the
// process down.
func TestGoBoundsTimeAndSurvivesAPanic(t *testing.T) {
	var logs testkit.SyncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	tr := NewTracker()
	var deadline time.Time
	var ok bool
	tr.Go(context.Background(), time.Minute, log, "chat work", func(ctx context.Context) {
		deadline, ok = ctx.Deadline()
	})
	tr.Go(context.Background(), time.Minute, log, "chat work", func(context.Context) { panic("boom") })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Wait(ctx); err != nil {
		t.Fatalf("work still counted after it returned or panicked: %v", err)
	}
	if !ok || time.Until(deadline) > time.Minute {
		t.Errorf("work's context deadline %v (set %v), want within a minute", deadline, ok)
	}
	if got := logs.String(); !strings.Contains(got, "chat work panicked") || !strings.Contains(got, "boom") {
		t.Errorf("the panic was not logged: %q", got)
	}
}

// TestHandleAnswersBusyWhenNoSlotFrees: a command runs while a slot is free and frees it after;
// one that finds every slot taken until its time runs out is told to try again, and its handler
// never runs.
func TestHandleAnswersBusyWhenNoSlotFrees(t *testing.T) {
	slots := make(chan struct{}, 1)
	ran := 0
	h := bot.HandlerFunc(func(context.Context, bot.Request) []bot.Reply {
		ran++
		return []bot.Reply{{Text: "done"}}
	})
	if r := Handle(context.Background(), slots, h, bot.Request{Text: "/gpu status"}); len(r) != 1 || r[0].Text != "done" {
		t.Fatalf("with a free slot: %+v", r)
	}
	if len(slots) != 0 {
		t.Fatal("the slot was not freed")
	}
	slots <- struct{}{} // every slot taken
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	r := Handle(ctx, slots, h, bot.Request{Text: "/gpu status"})
	if len(r) != 1 || !r[0].Error || !r[0].Ephemeral || r[0].Text != Busy {
		t.Fatalf("with no free slot: %+v", r)
	}
	if ran != 1 {
		t.Errorf("handler ran %d times, want 1", ran)
	}
}

// TestACommandWaitingOutsideGivesItsSlotUp: a command waiting on something outside the process
// (bot.WaitOutside) frees its slot for another command, takes one back before it goes on, and
// every slot is free once both are answered.
func TestACommandWaitingOutsideGivesItsSlotUp(t *testing.T) {
	slots := make(chan struct{}, 1)
	waiting, goOn := make(chan struct{}), make(chan struct{})
	h := bot.HandlerFunc(func(ctx context.Context, req bot.Request) []bot.Reply {
		if req.Text == "/gpu request" {
			resume := bot.WaitOutside(ctx)
			close(waiting)
			<-goOn // the scheduler's submission
			resume()
			if len(slots) != 1 {
				t.Errorf("the request went on without a slot: %d taken", len(slots))
			}
		}
		return []bot.Reply{{Text: "done " + req.Text}}
	})
	first := make(chan []bot.Reply, 1)
	go func() { first <- Handle(context.Background(), slots, h, bot.Request{Text: "/gpu request"}) }()
	<-waiting
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if r := Handle(ctx, slots, h, bot.Request{Text: "/gpu list"}); len(r) != 1 || r[0].Text != "done /gpu list" {
		t.Fatalf("another command while the first waited outside: %+v", r)
	}
	close(goOn)
	if r := <-first; len(r) != 1 || r[0].Text != "done /gpu request" {
		t.Fatalf("the waiting command: %+v", r)
	}
	if len(slots) != 0 {
		t.Errorf("%d slots still taken after both were answered", len(slots))
	}
}
