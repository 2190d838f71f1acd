package inflight

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"
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
