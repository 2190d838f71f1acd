package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
	next := client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c := *client
	c.Transport = jsonRateLimits{next: next}
	s.Client = &c
	s.ShouldRetryOnRateLimit = false
	s.MaxRestRetries = 1
	s.StateEnabled = false
	// Interactions arrive whatever the intents; DIRECT_MESSAGES brings the DMs people send the
	// app, with their text (which needs no privileged Message Content intent in a DM to the app).
	s.Identify.Intents = discordgo.IntentsDirectMessages
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
	resp, err := t.next.RoundTrip(r2)
	if err != nil {
		// The client's error names the request's URL, Discord's, which was never tried.
		return nil, fmt.Errorf("sent to %s as DISCORD_API_URL says: %w", r2.URL.Redacted(), err)
	}
	return resp, nil
}

// jsonRateLimits turns an HTTP 429 whose body is not Discord's JSON (the page of a proxy in front
// of Discord, such as Cloudflare's) into Discord's JSON, with retry_after from the Retry-After
// header (a second when it has none), so that it is waited out like any other rate limit instead
// of failing the call as an unreadable answer.
type jsonRateLimits struct{ next http.RoundTripper }

func (t jsonRateLimits) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		return resp, err
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	var probe struct {
		RetryAfter *float64 `json:"retry_after"`
	}
	if rerr == nil && json.Unmarshal(body, &probe) == nil && probe.RetryAfter != nil {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	after := 1.0
	if v, err := strconv.ParseFloat(strings.TrimSpace(resp.Header.Get("Retry-After")), 64); err == nil && v >= 0 && !math.IsInf(v, 0) {
		after = v
	}
	b, _ := json.Marshal(map[string]any{"message": "rate limited in front of Discord", "retry_after": after, "global": false})
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Set("Content-Type", "application/json")
	return resp, nil
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
		if err := inflight.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}
