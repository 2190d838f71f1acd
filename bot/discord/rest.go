package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/acme/quartermaster/bot/internal/inflight"
)

// Retry defaults.
const (
	// maxRateLimitRetries is how often one call is retried after HTTP 429 before it is given up.
	maxRateLimitRetries = 8
	// minRetryAfter is the shortest wait after a 429 whose retry_after is missing or zero.
	minRetryAfter = 50 * time.Millisecond
)

// newSession makes the REST (and gateway) session. discordgo's endpoints are fixed when it is
// loaded, so another API base is reached through a transport that rewrites the host; its
// rate-limit buckets stay in use, and HTTP 429 is left to retry, which waits with the context.
func newSession(token, apiURL string, client *http.Client) (*discordgo.Session, error) {
	s, err := discordgo.New("Bot " + token)
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	if client == nil {
		// Deferred answers and notices go out side by side: keep enough connections to Discord
		// open for them (the default transport keeps two).
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 32
		client = &http.Client{Timeout: 30 * time.Second, Transport: t}
	}
	if apiURL != "" {
		c, err := rewriteClient(client, apiURL)
		if err != nil {
			return nil, err
		}
		client = c
	}
	s.Client = client
	s.ShouldRetryOnRateLimit = false
	s.MaxRestRetries = 1
	s.StateEnabled = false
	s.Identify.Intents = discordgo.IntentsNone // interactions arrive whatever the intents
	return s, nil
}

// rewriteClient is client with requests for Discord's API host sent to base instead.
func rewriteClient(client *http.Client, base string) (*http.Client, error) {
	to, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || (to.Scheme != "http" && to.Scheme != "https") || to.Host == "" {
		return nil, fmt.Errorf("discord: the API URL (DISCORD_API_URL) %q is not an http(s) URL; example: http://127.0.0.1:9000", base)
	}
	from, err := url.Parse(discordgo.EndpointDiscord)
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	next := client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c := *client
	c.Transport = rewriter{from: from.Host, to: to, next: next}
	return &c, nil
}

type rewriter struct {
	from string
	to   *url.URL
	next http.RoundTripper
}

func (t rewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.EqualFold(r.URL.Host, t.from) {
		return t.next.RoundTrip(r)
	}
	r2 := r.Clone(r.Context())
	r2.URL.Scheme = t.to.Scheme
	r2.URL.Host = t.to.Host
	r2.URL.Path = t.to.Path + r.URL.Path
	if r.URL.RawPath != "" {
		r2.URL.RawPath = t.to.Path + r.URL.RawPath
	}
	r2.Host = ""
	return t.next.RoundTrip(r2)
}

// retry runs call again while Discord answers HTTP 429, waiting as long as its retry_after says
// (discordgo's buckets already wait before a call that would exceed a known limit).
func (a *Adapter) retry(ctx context.Context, call func() error) error {
	for attempt := 0; ; attempt++ {
		err := call()
		var rl *discordgo.RateLimitError
		if !errors.As(err, &rl) || attempt >= maxRateLimitRetries {
			return err
		}
		wait := minRetryAfter
		if rl.RateLimit != nil && rl.TooManyRequests != nil {
			wait = max(rl.RetryAfter, minRetryAfter)
		}
		a.log.Info("rate limited by Discord; retrying", "url", rl.URL, "after", wait)
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
	}
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

// outbox delivers messages one at a time per recipient, in the order they were queued, so an
// approval's decision never overtakes the approval message it edits. Each recipient has its own
// queue and, while it is not empty, its own goroutine.
type outbox struct {
	track  *inflight.Tracker
	mu     sync.Mutex
	queues map[string][]func(ctx context.Context)
}

func newOutbox(track *inflight.Tracker) *outbox {
	return &outbox{track: track, queues: map[string][]func(ctx context.Context){}}
}

// push queues job for key; it runs after everything queued before it for the same key.
func (o *outbox) push(ctx context.Context, key string, job func(ctx context.Context)) {
	o.track.Add()
	o.mu.Lock()
	defer o.mu.Unlock()
	q, running := o.queues[key]
	o.queues[key] = append(q, job)
	if !running {
		go o.drain(ctx, key)
	}
}

func (o *outbox) drain(ctx context.Context, key string) {
	for {
		o.mu.Lock()
		q := o.queues[key]
		if len(q) == 0 {
			delete(o.queues, key)
			o.mu.Unlock()
			return
		}
		job := q[0]
		o.queues[key] = q[1:]
		o.mu.Unlock()
		job(ctx)
		o.track.Done()
	}
}
