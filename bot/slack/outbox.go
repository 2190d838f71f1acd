package slack

import (
	"context"
	"errors"
	"net/http"
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

// outbox delivers messages to channels one at a time per channel, paced (Slack allows about one
// message per second per channel) and retried, in the order they were queued. A message is never
// sent twice: only an HTTP 429, which means Slack did not take it, is retried.
type outbox struct{ *inflight.Outbox }

func newOutbox(interval time.Duration, track *inflight.Tracker) *outbox {
	return &outbox{inflight.NewOutbox(interval, track)}
}

// retry runs call again while Slack answers HTTP 429, waiting as long as its Retry-After says.
func (o *outbox) retry(ctx context.Context, call func() error) error {
	for attempt := 0; ; attempt++ {
		err := call()
		wait, limited := rateLimited(err)
		if !limited || attempt >= maxRateLimitRetries {
			return err
		}
		if err := o.Sleep(ctx, max(wait, minRetryAfter)); err != nil {
			return err
		}
	}
}

// rateLimited reports whether err is Slack's HTTP 429, and how long it asks to wait. slack-go
// reads a 429 with a Retry-After header as a RateLimitedError; one without it (a proxy in front
// of Slack may drop the header) comes as a bare status error, and still means Slack took nothing.
func rateLimited(err error) (time.Duration, bool) {
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return rl.RetryAfter, true
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) && sc.Code == http.StatusTooManyRequests {
		return 0, true
	}
	return 0, false
}
