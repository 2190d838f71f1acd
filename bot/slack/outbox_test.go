package slack

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/acme/quartermaster/bot/internal/inflight"
)

// fakeTime is a clock that moves only when someone sleeps.
type fakeTime struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (f *fakeTime) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeTime) Sleep(_ context.Context, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sleeps = append(f.sleeps, d)
	if d > 0 {
		f.now = f.now.Add(d)
	}
	return nil
}

// TestOutboxPaces: posts to one channel are one interval apart and in order; another channel
// does not wait for the first.
func TestOutboxPaces(t *testing.T) {
	ft := &fakeTime{now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	tr := inflight.NewTracker()
	o := newOutbox(time.Second, tr)
	o.Now, o.Sleep = ft.Now, ft.Sleep
	var mu sync.Mutex
	var sent []string
	at := map[string][]time.Time{}
	job := func(ch, text string) func(context.Context) {
		return func(context.Context) {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, ch+":"+text)
			at[ch] = append(at[ch], ft.Now())
		}
	}
	ctx := context.Background()
	for _, s := range []string{"1", "2", "3", "4"} {
		o.Push(ctx, "#a", job("#a", s))
	}
	if err := tr.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	o.Push(ctx, "#b", job("#b", "x"))
	if err := tr.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	var a []string
	for _, s := range sent {
		if s[:2] == "#a" {
			a = append(a, s)
		}
	}
	if len(a) != 4 || a[0] != "#a:1" || a[3] != "#a:4" {
		t.Fatalf("sent %v", sent)
	}
	for i := 1; i < len(at["#a"]); i++ {
		if gap := at["#a"][i].Sub(at["#a"][i-1]); gap < time.Second {
			t.Errorf("posts %d and %d to #a are %s apart", i, i+1, gap)
		}
	}
	if len(at["#b"]) != 1 || len(ft.sleeps) != 3 {
		t.Errorf("#b posted %d times; %d paced waits (want 3, all on #a)", len(at["#b"]), len(ft.sleeps))
	}
}

// TestRetryAfter: a 429 is retried after its Retry-After; other errors are not retried, so a
// message Slack may have taken is never sent twice.
func TestRetryAfter(t *testing.T) {
	ft := &fakeTime{now: time.Unix(0, 0)}
	o := newOutbox(time.Second, inflight.NewTracker())
	o.Now, o.Sleep = ft.Now, ft.Sleep
	calls := 0
	err := o.retry(context.Background(), func() error {
		calls++
		if calls < 3 {
			return &slack.RateLimitedError{RetryAfter: time.Duration(calls) * 7 * time.Second}
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
	if len(ft.sleeps) != 2 || ft.sleeps[0] != 7*time.Second || ft.sleeps[1] != 14*time.Second {
		t.Errorf("waited %v, want [7s 14s]", ft.sleeps)
	}
	// Retry-After: 0 still waits a second.
	ft.sleeps, calls = nil, 0
	_ = o.retry(context.Background(), func() error {
		calls++
		if calls == 1 {
			return &slack.RateLimitedError{}
		}
		return nil
	})
	if len(ft.sleeps) != 1 || ft.sleeps[0] != time.Second {
		t.Errorf("waited %v after Retry-After 0", ft.sleeps)
	}
	boom := errors.New("connection reset")
	calls = 0
	if err := o.retry(context.Background(), func() error { calls++; return boom }); !errors.Is(err, boom) || calls != 1 {
		t.Errorf("a non-429 error: %v after %d calls", err, calls)
	}
	// A channel that stays rate limited is given up after a bounded number of tries.
	calls = 0
	err = o.retry(context.Background(), func() error { calls++; return &slack.RateLimitedError{RetryAfter: time.Second} })
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || calls != maxRateLimitRetries+1 {
		t.Errorf("always limited: %v after %d calls", err, calls)
	}
}
