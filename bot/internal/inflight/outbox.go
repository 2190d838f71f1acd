package inflight

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Outbox runs jobs (messages to send) one at a time per key (a channel, a recipient), in the
// order they were pushed, at least Interval apart: so that a decision never overtakes the
// message it edits, and a platform's per-channel rate is kept. Each key has its own queue and,
// while it is not empty, its own goroutine. Each job is counted in the Tracker until it is done.
type Outbox struct {
	// Interval is the least time between the end of one job and the start of the next for a
	// key; zero runs them back to back.
	Interval time.Duration
	// Now and Sleep are the clock (time.Now and Sleep unless a test sets others first).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error

	track  *Tracker
	mu     sync.Mutex
	queues map[string]*queue
}

type queue struct {
	jobs    []func(ctx context.Context)
	running bool
	last    time.Time // when the last job for this key finished
}

// NewOutbox is an empty Outbox whose jobs are counted in track.
func NewOutbox(interval time.Duration, track *Tracker) *Outbox {
	return &Outbox{Interval: interval, Now: time.Now, Sleep: Sleep, track: track, queues: map[string]*queue{}}
}

// Sleep waits d, or less when ctx ends first (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Push queues job for key; it runs after everything pushed before it for the same key, with ctx.
func (o *Outbox) Push(ctx context.Context, key string, job func(ctx context.Context)) {
	o.track.Add()
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.queues[key]
	if q == nil {
		q = &queue{}
		o.queues[key] = q
	}
	q.jobs = append(q.jobs, job)
	if !q.running {
		q.running = true
		go o.drain(ctx, key, q)
	}
}

// Call pushes job for key on base (the queue outlives the caller) and waits for its error, or
// until ctx ends: then it returns ctx's error, and the job, if its turn has not come yet, does
// not run; if it is running, its context ends too (it ends with base or with ctx, whichever ends
// first), so that it sends nothing after its caller was told it failed: a job waiting out a rate
// limit when its caller gives up (an outbox whose claim is running out, which will send the
// message again) does not post the message too when the wait is over.
func (o *Outbox) Call(ctx, base context.Context, key string, job func(ctx context.Context) error) error {
	done := make(chan error, 1)
	var abandoned atomic.Bool
	o.Push(base, key, func(qctx context.Context) {
		if abandoned.Load() {
			done <- errors.New("the sender stopped waiting before the message went out")
			return
		}
		jctx, cancel := context.WithCancel(qctx)
		defer cancel()
		stop := context.AfterFunc(ctx, cancel)
		defer stop()
		done <- job(jctx)
	})
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		abandoned.Store(true)
		return ctx.Err()
	}
}

func (o *Outbox) drain(ctx context.Context, key string, q *queue) {
	for {
		o.mu.Lock()
		if len(q.jobs) == 0 {
			q.running = false
			if o.Now().Sub(q.last) >= o.Interval {
				delete(o.queues, key) // nothing to pace against any more
			}
			o.mu.Unlock()
			return
		}
		job := q.jobs[0]
		q.jobs = q.jobs[1:]
		last := q.last
		o.mu.Unlock()
		if !last.IsZero() && o.Interval > 0 {
			_ = o.Sleep(ctx, last.Add(o.Interval).Sub(o.Now()))
		}
		job(ctx)
		o.mu.Lock()
		q.last = o.Now()
		o.mu.Unlock()
		o.track.Done()
	}
}
