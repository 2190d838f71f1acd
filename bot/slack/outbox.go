package slack

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/acme/quartermaster/bot/internal/inflight"
)

// Pacing and retry defaults.
const (
	// DefaultChannelInterval is the pause between two posts to one channel: Slack allows about
	// one message per second per channel.
	DefaultChannelInterval = time.Second
	// maxRateLimitRetries is how often one call is retried after HTTP 429 before it is given up.
	maxRateLimitRetries = 8
	// minRetryAfter is the shortest wait after a 429 whose Retry-After is missing or zero.
	minRetryAfter = time.Second
)

// outbox delivers messages to channels one at a time per channel, paced and retried, in the
// order they were queued. Each channel (or recipient) has its own queue and, while the queue is
// not empty, its own worker goroutine. A message is never sent twice: only an HTTP 429, which
// means Slack did not take it, is retried.
type outbox struct {
	interval time.Duration
	now      func() time.Time
	sleep    func(ctx context.Context, d time.Duration) error
	track    *inflight.Tracker

	mu     sync.Mutex
	queues map[string]*queue
}

type queue struct {
	jobs    []func(ctx context.Context)
	running bool
	last    time.Time // when the last call to this channel finished
}

func newOutbox(interval time.Duration, track *inflight.Tracker) *outbox {
	return &outbox{interval: interval, now: time.Now, sleep: sleepCtx, track: track, queues: map[string]*queue{}}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
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

// push queues job for key; it runs after everything queued before it for the same key.
func (o *outbox) push(ctx context.Context, key string, job func(ctx context.Context)) {
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

func (o *outbox) drain(ctx context.Context, key string, q *queue) {
	for {
		o.mu.Lock()
		if len(q.jobs) == 0 {
			q.running = false
			if o.now().Sub(q.last) >= o.interval {
				delete(o.queues, key) // nothing to pace against any more
			}
			o.mu.Unlock()
			return
		}
		job := q.jobs[0]
		q.jobs = q.jobs[1:]
		last := q.last
		o.mu.Unlock()
		if !last.IsZero() {
			_ = o.sleep(ctx, last.Add(o.interval).Sub(o.now()))
		}
		job(ctx)
		o.mu.Lock()
		q.last = o.now()
		o.mu.Unlock()
		o.track.Done()
	}
}

// retry runs call again while Slack answers HTTP 429, waiting as long as its Retry-After says.
func (o *outbox) retry(ctx context.Context, call func() error) error {
	for attempt := 0; ; attempt++ {
		err := call()
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || attempt >= maxRateLimitRetries {
			return err
		}
		if err := o.sleep(ctx, max(rl.RetryAfter, minRetryAfter)); err != nil {
			return err
		}
	}
}
