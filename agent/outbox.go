package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/config"
)

// Backoff bounds between attempts while the service is unreachable.
const (
	minBackoff = time.Second
	maxBackoff = time.Minute
)

// OutboxConfig configures an Outbox.
type OutboxConfig struct {
	URL   string // the service's base URL
	Token string
	// TokenFile, when the token came from a file, is read again after the service refuses the
	// token (401, 403), so that a new token put there (revoked and created again, a Kubernetes
	// Secret updated) is used without a restart, and the reports kept meanwhile go through.
	TokenFile string
	Client    *http.Client
	Window    int
	Logger    *slog.Logger
	Now       func() time.Time
	// OnResponse sees every answer to an accepted or ignored report.
	OnResponse func(report.Response)
}

// Outbox sends reports to the service in the order they were made. While the service cannot be
// reached it keeps the last Window reports and retries with exponential backoff; when the window is
// full the oldest report is dropped, and the log says how many were.
type Outbox struct {
	cfg  OutboxConfig
	url  string
	wake chan struct{}

	mu        sync.Mutex
	token     string
	reread    bool // the service refused the token: read TokenFile before the next attempt
	queue     []queued
	pushed    uint64
	dropped   uint64 // since the start
	unlogged  uint64 // dropped since the last log line
	lastLog   time.Time
	sent      uint64
	refused   uint64
	failingAt time.Time // when sending started failing; zero while it works
}

// NewOutbox makes an outbox.
func NewOutbox(cfg OutboxConfig) *Outbox {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Outbox{cfg: cfg, url: strings.TrimRight(cfg.URL, "/") + report.Path, wake: make(chan struct{}, 1), token: cfg.Token}
}

// currentToken is the token to send with: after the service refused it, the token file's again,
// if the file holds another.
func (o *Outbox) currentToken() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.reread && o.cfg.TokenFile != "" {
		o.reread = false
		b, err := os.ReadFile(o.cfg.TokenFile)
		switch t := strings.TrimSpace(string(b)); {
		case err != nil:
			// The advice of the agent's --token-file at start: what is wrong, and what to do.
			o.cfg.Logger.Warn("cannot read the token file again after the service refused the token", "file", o.cfg.TokenFile,
				"err", config.SecretFileError("--token-file", o.cfg.TokenFile, err))
		case t != "" && t != o.token:
			o.token = t
			o.cfg.Logger.Info("read a new token from the token file; sending the kept reports with it", "file", o.cfg.TokenFile)
		}
	}
	return o.token
}

// Push queues an encoded report, dropping the oldest when the window is full.
func (o *Outbox) Push(body []byte) {
	o.mu.Lock()
	if len(o.queue) >= o.cfg.Window {
		n := len(o.queue) - o.cfg.Window + 1
		o.queue = append(o.queue[:0], o.queue[n:]...)
		o.dropped += uint64(n)
		o.unlogged += uint64(n)
		if now := o.cfg.Now(); now.Sub(o.lastLog) >= time.Minute {
			o.cfg.Logger.Warn("the service has been unreachable too long: dropped the oldest reports to keep the window",
				"dropped", o.unlogged, "dropped_total", o.dropped, "window", o.cfg.Window, "failing_since", o.failingAt)
			o.unlogged, o.lastLog = 0, now
		}
	}
	o.pushed++
	o.queue = append(o.queue, queued{o.pushed, body})
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Stats says how many reports wait, were sent, refused by the service, and dropped.
func (o *Outbox) Stats() (queued int, sent, refused, dropped uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.queue), o.sent, o.refused, o.dropped
}

// errRetry marks a failure worth trying again later: the service is down, busy, refuses the
// token (which an admin may fix), or is not at the URL (which an admin may fix too).
type errRetry struct{ error }

// errWrongURL marks an answer that says the service's URL is wrong (no report endpoint there).
type errWrongURL struct{ error }

// queued is a report waiting in the outbox, numbered in push order.
type queued struct {
	n    uint64
	body []byte
}

// Flush sends the queued reports in order until the queue is empty or one cannot be sent now;
// it returns that failure. A report the service refuses as bad is dropped (it would never pass).
func (o *Outbox) Flush(ctx context.Context) error {
	for {
		o.mu.Lock()
		if len(o.queue) == 0 {
			o.mu.Unlock()
			return nil
		}
		head := o.queue[0]
		o.mu.Unlock()
		err := o.send(ctx, head.body)
		var retry errRetry
		if errors.As(err, &retry) {
			o.mu.Lock()
			if o.failingAt.IsZero() {
				o.failingAt = o.cfg.Now()
			}
			o.mu.Unlock()
			return err
		}
		o.mu.Lock()
		if len(o.queue) > 0 && o.queue[0].n == head.n { // not dropped meanwhile
			o.queue = o.queue[1:]
		}
		if err != nil {
			o.refused++
			o.cfg.Logger.Warn("the service refused a report; dropped it", "err", err)
		} else {
			o.sent++
		}
		if !o.failingAt.IsZero() {
			o.cfg.Logger.Info("the service is reachable again", "after", o.cfg.Now().Sub(o.failingAt).Round(time.Second).String(), "queued", len(o.queue))
			o.failingAt = time.Time{}
		}
		o.mu.Unlock()
	}
}

func (o *Outbox) send(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+o.currentToken())
	req.Header.Set(report.SentAtHeader, o.cfg.Now().UTC().Format(time.RFC3339Nano))
	resp, err := o.cfg.Client.Do(req)
	if err != nil {
		return errRetry{fmt.Errorf("send a report: %w", err)}
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode/100 == 2:
		// The service answers every report it took or ignored with a report.Response. Anything
		// else that says 200 (a login proxy's sign-in page after its redirect, another web server)
		// has not taken it: keep it, and say the URL is likely wrong.
		var fields map[string]json.RawMessage
		var r report.Response
		if json.Unmarshal(answer, &fields) != nil || fields["accepted"] == nil || json.Unmarshal(answer, &r) != nil {
			return errRetry{errWrongURL{fmt.Errorf("%s answered %s, but not as the Quartermaster service answers a report (a sign-in page, or another web server): the --service URL is likely wrong, or a proxy in front of the service stops the agent; give the service's own base URL, e.g. --service https://qm.example.com",
				o.url, resp.Status)}}
		}
		if o.cfg.OnResponse != nil {
			o.cfg.OnResponse(r)
		}
		return nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		o.mu.Lock()
		o.reread = true
		o.mu.Unlock()
		return errRetry{fmt.Errorf("the service refused this node's token (%s): %s", resp.Status, serviceError(answer))}
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		// No report endpoint at this URL: the service would take the report, so keep it.
		return errRetry{errWrongURL{fmt.Errorf("%s answered %s: the --service URL is likely wrong; give the service's base URL, without %s, e.g. --service https://qm.example.com",
			o.url, resp.Status, report.Path)}}
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode/100 == 5:
		return errRetry{fmt.Errorf("the service answered %s: %s", resp.Status, serviceError(answer))}
	default:
		return fmt.Errorf("%s: %s", resp.Status, serviceError(answer))
	}
}

func serviceError(b []byte) string {
	var e report.Error
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return e.Error
	}
	return strings.TrimSpace(string(b))
}

// Run sends whatever is queued until ctx ends, backing off exponentially (1 s to 1 min, with
// jitter) while the service cannot be reached.
func (o *Outbox) Run(ctx context.Context) {
	backoff := time.Duration(0)
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-o.wake:
			if backoff > 0 {
				continue // a new report waits for the retry
			}
		case <-retry:
		}
		err := o.Flush(ctx)
		if err == nil {
			backoff, retry = 0, nil
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if backoff == 0 {
			backoff = minBackoff
			if errors.As(err, new(errWrongURL)) {
				o.cfg.Logger.Warn("no Quartermaster service at this URL, likely a wrong --service; keeping reports and retrying", "err", err)
			} else {
				o.cfg.Logger.Warn("cannot report to the service; keeping reports and retrying", "err", err)
			}
		} else {
			backoff = min(2*backoff, maxBackoff)
		}
		jitter := time.Duration(rand.Int64N(int64(backoff) / 5))
		retry = time.After(backoff - backoff/10 + jitter)
	}
}
