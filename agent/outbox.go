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
	"net/url"
	"os"
	"path/filepath"
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

// MaxOutboxBytes bounds the reports the outbox keeps, whatever its Window: a quarter of the 64 MiB
// the agent's systemd unit and DaemonSet give it (the Go heap grows to twice what it holds before
// it collects), about 4,500 reports of 8 GPUs (half a day at 10 s).
const MaxOutboxBytes = 16 << 20

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
// reached, or refuses the node's token, it keeps the last Window reports and retries with
// exponential backoff; when the window is full the oldest report is dropped. The log says once
// what keeps the reports from going through (and again when that changes: a service down, then
// refusing the token), once when the window is full, and once when reports go through again, with
// how many were dropped meanwhile; never a line per report or per minute while it lasts.
type Outbox struct {
	cfg  OutboxConfig
	url  string
	wake chan struct{}

	mu        sync.Mutex
	token     string
	reread    bool // the service refused the token: read TokenFile before the next attempt
	queue     []queued
	bytes     int // the queue's reports' size
	pushed    uint64
	dropped   uint64 // since the start
	sent      uint64
	refused   uint64
	failingAt time.Time // when sending started failing; zero while it works
	// failing is why reports do not go through (the last failure) and failKind its kind, as last
	// logged; lost counts the reports dropped since they stopped going through, and full says
	// the log has said the window is full.
	failing  error
	failKind string
	lost     uint64
	full     bool
	// refusing is the last reason the service gave for refusing a report as bad, as logged, and
	// refusedRun how many it refused since it last took one.
	refusing   string
	refusedRun uint64
	// tokenFileErr is the last reason the token file could not be read again, as logged.
	tokenFileErr string
	// oversize counts the reports over report.MaxBytes dropped unsent since one last fitted; the
	// log has said so when it is above 0.
	oversize uint64
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
		if err == nil {
			o.tokenFileErr = ""
		}
		switch t := strings.TrimSpace(string(b)); {
		case err != nil:
			// The advice of the agent's --token-file at start: what is wrong, and what to do; said
			// once, not at every try, until it changes.
			advice := config.SecretFileError("--token-file", o.cfg.TokenFile, err).Error()
			if advice != o.tokenFileErr {
				o.tokenFileErr = advice
				o.cfg.Logger.Warn("cannot read the token file again after the service refused the token", "file", o.cfg.TokenFile, "err", advice)
			}
		case t != "" && t != o.token:
			o.token = t
			o.cfg.Logger.Info("read a new token from the token file; sending the kept reports with it", "file", o.cfg.TokenFile)
		}
	}
	return o.token
}

// Push queues an encoded report, dropping the oldest when the window is full. A report over
// report.MaxBytes is never sent: the service refuses it (413), and past the limit it puts on every
// request it answers without reading the body, which the HTTP client may see as a connection reset
// rather than the answer, to be retried for ever in front of every later report. It is dropped
// here and counted as refused; the log says so once, until a report fits again.
func (o *Outbox) Push(body []byte) {
	o.mu.Lock()
	if len(body) > report.MaxBytes {
		o.refused++
		if o.oversize == 0 {
			o.cfg.Logger.Warn(tooLarge(body)+" (said again only after a report fits; quartermaster_agent_reports_refused_total counts each)",
				"bytes", len(body), "limit", report.MaxBytes)
		}
		o.oversize++
		o.mu.Unlock()
		return
	}
	if o.oversize > 0 {
		o.cfg.Logger.Info("reports fit again within the size the service takes", "dropped", o.oversize)
		o.oversize = 0
	}
	// The oldest go, to keep Window reports and MaxOutboxBytes with this one.
	n, size := 0, o.bytes+len(body)
	for n < len(o.queue) && (len(o.queue)-n >= o.cfg.Window || size > MaxOutboxBytes) {
		size -= len(o.queue[n].body)
		n++
	}
	if n > 0 {
		o.queue = append(o.queue[:0], o.queue[n:]...)
		o.dropped += uint64(n)
		o.lost += uint64(n)
		if !o.full {
			// Said once: quartermaster_agent_reports_dropped_total counts every one.
			o.full = true
			why := "reports could not be sent"
			if o.failing != nil {
				why = o.failing.Error()
			}
			o.cfg.Logger.Warn(fmt.Sprintf("the agent keeps as many reports as --window allows (%d), and at most %d MiB of them, so it dropped the oldest reports, and drops the oldest for each new one until reports go through again", o.cfg.Window, MaxOutboxBytes>>20),
				"why", why, "failing_since", o.failingAt)
		}
	}
	o.pushed++
	o.queue = append(o.queue, queued{o.pushed, body})
	o.bytes = size
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// tooLarge says in one sentence that body, an encoded report, is over the size the service takes,
// what it holds and what makes reports fit again.
func tooLarge(body []byte) string {
	var r report.Report
	_ = json.Unmarshal(body, &r)
	procs := 0
	for _, g := range r.GPUs {
		procs += len(g.Processes)
	}
	what := fmt.Sprintf("a report of this node is %d bytes, over the %d bytes (%d MiB) the service takes, so the agent dropped it unsent", len(body), report.MaxBytes, report.MaxBytes>>20)
	// A process takes about 60 bytes of a report; a report of mostly processes fits again with
	// fewer of them, and no setting raises the service's limit.
	if procs*60 >= len(body)/2 {
		return fmt.Sprintf("%s: it lists %d processes on %d GPUs, and reports fit again once fewer processes run on the node's GPUs (the limit is fixed; no setting of the agent or the service raises it)", what, procs, len(r.GPUs))
	}
	return fmt.Sprintf("%s: it lists %d processes on %d GPUs, which is not what makes it large, so the agent and the service are likely of different versions; run the same version on both", what, procs, len(r.GPUs))
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

func (e errRetry) Unwrap() error { return e.error }

// errWrongURL marks an answer that says the service's URL is wrong (no report endpoint there).
type errWrongURL struct{ error }

func (e errWrongURL) Unwrap() error { return e.error }

// errToken marks an answer that refuses the node's token or reports: status 401 or 403.
type errToken struct {
	error
	status int
}

func (e errToken) Unwrap() error { return e.error }

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
			if ctx.Err() != nil {
				return err // the agent is stopping: not the service's doing
			}
			o.mu.Lock()
			if o.failingAt.IsZero() {
				o.failingAt = o.cfg.Now()
			}
			o.failing = err
			if kind := failureKind(err); kind != o.failKind {
				o.failKind = kind
				o.logFailure(kind, err)
			}
			o.mu.Unlock()
			return err
		}
		o.mu.Lock()
		if len(o.queue) > 0 && o.queue[0].n == head.n { // not dropped meanwhile
			o.queue = o.queue[1:]
			o.bytes -= len(head.body)
		}
		if err != nil {
			o.refused++
			o.refusedRun++
			// Said once per reason: an agent and a service of different versions would refuse
			// every report; quartermaster_agent_reports_refused_total counts each.
			if msg := err.Error(); msg != o.refusing {
				o.refusing = msg
				o.cfg.Logger.Warn("the service refused a report; dropped it (said again only for another reason; quartermaster_agent_reports_refused_total counts each)", "err", err)
			}
		} else {
			o.sent++
			if o.refusedRun > 0 {
				o.cfg.Logger.Info("the service takes reports again after refusing some as bad", "refused", o.refusedRun)
				o.refusedRun, o.refusing = 0, ""
			}
		}
		if !o.failingAt.IsZero() {
			o.cfg.Logger.Info("the service takes reports again", "after", o.cfg.Now().Sub(o.failingAt).Round(time.Second).String(),
				"queued", len(o.queue), "dropped", o.lost)
			o.failingAt, o.failing, o.failKind, o.lost, o.full = time.Time{}, nil, "", 0, false
		}
		o.mu.Unlock()
	}
}

// Kinds of failure to send a report, each said once in the log.
const (
	failDown     = "down"      // no answer, 429 or 5xx
	failToken    = "token"     // 401, 403: "token 401", "token 403"
	failWrongURL = "wrong_url" // no report endpoint at the URL, or not the service answering
)

func failureKind(err error) string {
	var t errToken
	switch {
	case errors.As(err, new(errWrongURL)):
		return failWrongURL
	case errors.As(err, &t):
		// 401 (the token unknown or revoked) and 403 (another node's token or GPUs) are two
		// things to mend: each is said.
		return fmt.Sprintf("%s %d", failToken, t.status)
	}
	return failDown
}

// logFailure says, once per kind, what keeps the reports from going through.
func (o *Outbox) logFailure(kind string, err error) {
	switch {
	case kind == failWrongURL:
		o.cfg.Logger.Warn("no Quartermaster service at this URL, likely a wrong --service; keeping reports and retrying", "err", err)
	case strings.HasPrefix(kind, failToken):
		how := "a new token takes a restart of the agent"
		switch creds := os.Getenv("CREDENTIALS_DIRECTORY"); {
		case o.cfg.TokenFile != "" && creds != "" && strings.HasPrefix(filepath.Clean(o.cfg.TokenFile), filepath.Clean(creds)+string(filepath.Separator)):
			// systemd's LoadCredential: a copy made when the unit started, never changed after.
			how = "the token is a systemd credential copied at start: put a new token in the file the unit's LoadCredential names, then systemctl restart the unit (quartermaster-agent)"
		case o.cfg.TokenFile != "":
			how = "the token file is read again before each try, so a new token put there is taken without a restart"
		}
		o.cfg.Logger.Warn("the service refuses this node's reports; keeping them and retrying, and "+how, "err", err)
	default:
		o.cfg.Logger.Warn("cannot report to the service; keeping reports and retrying", "err", err)
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
		what := "token" // 401: the token is unknown or revoked
		if resp.StatusCode == http.StatusForbidden {
			what = "reports" // 403: another node's token, or another node's GPUs
		}
		return errRetry{errToken{fmt.Errorf("the service refused this node's %s (%s): %s", what, resp.Status, serviceError(answer)), resp.StatusCode}}
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		// No report endpoint at this URL: the service would take the report, so keep it.
		return errRetry{errWrongURL{fmt.Errorf("%s answered %s: the --service URL is likely wrong; give the service's base URL, without %s, e.g. --service %s",
			o.url, resp.Status, report.Path, baseWithoutPath(o.url))}}
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
			backoff = minBackoff // Flush has said what fails
		} else {
			backoff = min(2*backoff, maxBackoff)
		}
		jitter := time.Duration(rand.Int64N(int64(backoff) / 5))
		retry = time.After(backoff - backoff/10 + jitter)
	}
}

// baseWithoutPath is the example for a report URL (the --service URL and the report's path) that
// found no report endpoint: where the --service URL has a path of its own, the URL without it (the
// service serves the reports at its root); else the documentation's example.
func baseWithoutPath(reportURL string) string {
	u, err := url.Parse(strings.TrimSuffix(reportURL, report.Path))
	if err != nil || u.Host == "" || strings.Trim(u.Path, "/") == "" {
		return "https://qm.example.com"
	}
	return u.Scheme + "://" + u.Host
}
