// Package inflight is what the chat adapters (Slack, Discord) share about deliveries: running
// the work a delivery starts (bounded in time and in number, a panic logged) and counting it
// while in flight, which their Wait waits out; keeping a command in the inbox until it is
// answered (Keeper); sending messages in order, one channel at a time (Outbox); and the keys of
// recent deliveries, so that a retried or replayed one does no work twice.
package inflight

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/acme/quartermaster/bot"
)

// Tracker counts work in flight (commands being answered, messages queued) so that Wait can
// tell when everything a chat platform was promised has been done.
type Tracker struct {
	mu   sync.Mutex
	n    int
	idle *sync.Cond
}

// NewTracker is a Tracker with nothing in flight.
func NewTracker() *Tracker {
	t := &Tracker{}
	t.idle = sync.NewCond(&t.mu)
	return t
}

// Add counts one more piece of work in flight.
func (t *Tracker) Add() {
	t.mu.Lock()
	t.n++
	t.mu.Unlock()
}

// Done counts one piece of work as finished.
func (t *Tracker) Done() {
	t.mu.Lock()
	t.n--
	if t.n == 0 {
		t.idle.Broadcast()
	}
	t.mu.Unlock()
}

// Wait blocks until nothing is in flight or ctx ends.
func (t *Tracker) Wait(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		t.mu.Lock()
		t.idle.Broadcast()
		t.mu.Unlock()
	})
	defer stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.n > 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		t.idle.Wait()
	}
	return nil
}

// Go runs f in a goroutine of its own, counted in t, with a context from base that ends after
// timeout: the work a delivery starts once it has been acknowledged. A panic in f is logged as
// "<what> panicked", with its stack, and goes no further.
func (t *Tracker) Go(base context.Context, timeout time.Duration, log *slog.Logger, what string, f func(ctx context.Context)) {
	t.Add()
	go func() {
		defer t.Done()
		defer func() {
			if p := recover(); p != nil {
				log.Error(what+" panicked", "panic", p, "stack", string(debug.Stack()))
			}
		}()
		ctx, cancel := context.WithTimeout(base, timeout)
		defer cancel()
		f(ctx)
	}()
}

// Busy is the answer to a command that found no free slot before its time ran out.
const Busy = "Quartermaster is too busy to answer just now; please try again in a minute."

// Handle runs h for req once one of slots is free (a send takes one, the answer frees it), so
// that at most cap(slots) commands are answered at once; a command still waiting when ctx ends
// is answered Busy. While the command waits on something outside the process (a scheduler's
// submission, see bot.WaitOutside) its slot is free for another command, and it takes one back
// before it goes on.
func Handle(ctx context.Context, slots chan struct{}, h bot.Handler, req bot.Request) []bot.Reply {
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return []bot.Reply{{Error: true, Ephemeral: true, Text: Busy}}
	}
	var mu sync.Mutex
	held := true
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		if held {
			<-slots
		}
	}()
	ctx = bot.WithSlot(ctx, func() func() {
		mu.Lock()
		defer mu.Unlock()
		if !held {
			return func() {} // given up already (work waiting on two things at once)
		}
		<-slots
		held = false
		return func() {
			// Back in the queue for a slot, which the command's end frees; a command whose time
			// ran out meanwhile goes on without one, only to fail.
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			mu.Lock()
			held = true
			mu.Unlock()
		}
	})
	return h.Handle(ctx, req)
}

// Redelivery defaults.
const (
	// SeenTTL is how long a delivery's key is remembered: Slack retries within minutes, and a
	// signed request (Slack) or interaction (Discord) older than five minutes is refused anyway.
	SeenTTL = 10 * time.Minute
	// SeenMax bounds the memory the keys take; past it the oldest are forgotten first.
	SeenMax = 100000
)

// Seen remembers the keys of recent deliveries (trigger ids, event ids, interaction ids) so a
// retried or replayed delivery is dropped before it does any work. It is only the first line: a
// delivery that reaches another replica, or arrives after a restart, is caught by the lease
// service's request key.
type Seen struct {
	// Now is the clock (time.Now unless a test sets another before first use).
	Now   func() time.Time
	mu    sync.Mutex
	at    map[string]time.Time
	order []string
}

// NewSeen is a Seen that remembers nothing yet.
func NewSeen() *Seen { return &Seen{Now: time.Now, at: map[string]time.Time{}} }

// First records key and reports whether it is new. An empty key is always new.
func (s *Seen) First(key string) bool {
	if key == "" {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.Now()
	if t, ok := s.at[key]; ok && now.Sub(t) < SeenTTL {
		return false
	}
	// Forget what has expired (or overflowed), oldest first.
	for len(s.order) > 0 {
		k := s.order[0]
		if t, ok := s.at[k]; ok && now.Sub(t) < SeenTTL && len(s.order) < SeenMax {
			break
		}
		delete(s.at, k)
		s.order = s.order[1:]
	}
	s.at[key] = now
	s.order = append(s.order, key)
	return true
}
