package agent_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent"
)

// warnings are the WARN lines of a text log.
func warnings(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "level=WARN") {
			out = append(out, l)
		}
	}
	return out
}

// A token revoked while the service was down for maintenance, and left revoked for hours: the log
// says once that the service cannot be reached, once that it refuses the node's token when that
// is what it does, and once that the window is full and the oldest reports go, naming the
// refused token as the reason rather than an unreachable service; no line a minute while it
// lasts. When a new token goes through, one line says so, with how many reports were lost.
func TestARevokedTokenIsSaidOnceNotOnceAMinute(t *testing.T) {
	svc := &tokenService{token: "qma_new"}
	srv := httptest.NewServer(svc)
	var down atomic.Bool
	down.Store(true)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		svc.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer proxy.Close()
	file := filepath.Join(t.TempDir(), "gpu-01")
	if err := os.WriteFile(file, []byte("qma_old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	o := agent.NewOutbox(agent.OutboxConfig{URL: proxy.URL, Token: "qma_old", TokenFile: file, Window: 30,
		Logger: slog.New(slog.NewTextHandler(&log, nil)), Now: func() time.Time { return now }})
	ctx := context.Background()
	seq := 0
	tick := func(n int) {
		for range n {
			seq++
			o.Push(body(seq))
			_ = o.Flush(ctx)
			now = now.Add(10 * time.Second)
		}
	}
	tick(6) // a minute with the service down
	down.Store(false)
	tick(6 * 60 * 3) // three hours with the token revoked
	warn := warnings(log.String())
	if len(warn) != 3 {
		t.Fatalf("%d warnings in three hours; want 3 (service down, token refused, window full):\n%s", len(warn), strings.Join(warn, "\n"))
	}
	if !strings.Contains(warn[0], "502") {
		t.Errorf("the first warning does not say the service could not be reached: %s", warn[0])
	}
	if !strings.Contains(warn[1], "token") || !strings.Contains(warn[1], "unknown or revoked") {
		t.Errorf("the second warning does not say the service refuses the token: %s", warn[1])
	}
	if strings.Contains(warn[2], "unreachable") || !strings.Contains(warn[2], "token") {
		t.Errorf("the window-full warning blames an unreachable service, or does not name the refused token: %s", warn[2])
	}
	if err := os.WriteFile(file, []byte("qma_new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	tick(1)
	if q, _, _, dropped := o.Stats(); q != 0 || dropped == 0 {
		t.Fatalf("with the new token: %d queued, %d dropped", q, dropped)
	}
	_, _, _, dropped := o.Stats()
	if !strings.Contains(log.String(), "level=INFO") || !strings.Contains(log.String(), "dropped="+itoa(dropped)) || len(warnings(log.String())) != 0 {
		t.Errorf("with the new token the log should say once that reports go through, and that %d were dropped:\n%s", dropped, log.String())
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// A token file that stays unreadable while the service refuses the token is said once, not at
// every try.
func TestAnUnreadableTokenFileIsSaidOnce(t *testing.T) {
	svc := &tokenService{token: "qma_new"}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "gpu-01")
	var log bytes.Buffer
	o := agent.NewOutbox(agent.OutboxConfig{URL: srv.URL, Token: "qma_old", TokenFile: file,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	o.Push(body(1))
	for range 20 {
		_ = o.Flush(context.Background())
	}
	if n := strings.Count(log.String(), "cannot read the token file"); n != 1 {
		t.Errorf("the missing token file was said %d times in 20 tries; want once:\n%s", n, log.String())
	}
}

// Under systemd the token file is a credential systemd copied when the unit started
// ($CREDENTIALS_DIRECTORY): reading it again finds the old token, so the log says that a new token
// takes a restart of the unit, not that it is taken from the file by itself.
func TestARefusedSystemdCredentialSaysToRestart(t *testing.T) {
	svc := &tokenService{token: "qma_new"}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	creds := t.TempDir()
	t.Setenv("CREDENTIALS_DIRECTORY", creds)
	file := filepath.Join(creds, "agent.token")
	if err := os.WriteFile(file, []byte("qma_old\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	o := agent.NewOutbox(agent.OutboxConfig{URL: srv.URL, Token: "qma_old", TokenFile: file,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	o.Push(body(1))
	_ = o.Flush(context.Background())
	warn := warnings(log.String())
	if len(warn) != 1 || !strings.Contains(warn[0], "systemctl restart") || strings.Contains(warn[0], "without a restart") {
		t.Errorf("a refused token given as a systemd credential: want one warning saying to restart the unit:\n%s", log.String())
	}
}

// A service that refuses every report as bad (an agent newer than the service: another report
// version) has each refused report dropped and counted, but the log says it once, and again only
// for another reason; when reports are taken again, one line says how many were refused.
func TestReportsRefusedAsBadAreSaidOncePerReason(t *testing.T) {
	var mu sync.Mutex
	answer := `{"error":"the report has version 2, but this service reads version 1; update the agent or the service"}`
	status := http.StatusBadRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	defer srv.Close()
	set := func(code int, body string) { mu.Lock(); status, answer = code, body; mu.Unlock() }
	var log bytes.Buffer
	o := agent.NewOutbox(agent.OutboxConfig{URL: srv.URL, Token: "qma_x", Logger: slog.New(slog.NewTextHandler(&log, nil))})
	ctx := context.Background()
	for i := 1; i <= 30; i++ {
		o.Push(body(i))
		if err := o.Flush(ctx); err != nil {
			t.Fatalf("a report refused as bad is dropped, not kept: %v", err)
		}
	}
	set(http.StatusRequestEntityTooLarge, `{"error":"the report is larger than 1048576 bytes"}`)
	for i := 31; i <= 40; i++ {
		o.Push(body(i))
		_ = o.Flush(ctx)
	}
	warn := warnings(log.String())
	if len(warn) != 2 || !strings.Contains(warn[0], "version 2") || !strings.Contains(warn[1], "larger than") {
		t.Fatalf("40 reports refused for two reasons: %d warnings; want one per reason:\n%s", len(warn), log.String())
	}
	if _, _, refused, _ := o.Stats(); refused != 40 {
		t.Errorf("%d reports counted refused; want 40", refused)
	}
	log.Reset()
	set(http.StatusOK, `{"accepted":true}`)
	o.Push(body(41))
	if err := o.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "level=INFO") || !strings.Contains(log.String(), "refused=40") {
		t.Errorf("when reports are taken again the log should say so once, with the 40 refused:\n%s", log.String())
	}
}

// The outbox is bounded in bytes as well as in reports: a --window set for a long outage (a day
// or a week of reports) cannot grow the agent past the 64 MiB its systemd unit and DaemonSet give
// it; the oldest reports go first, as when the window is full.
func TestTheOutboxIsBoundedInBytes(t *testing.T) {
	svc := &fakeService{status: http.StatusServiceUnavailable}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	var log bytes.Buffer
	o := agent.NewOutbox(agent.OutboxConfig{URL: srv.URL, Token: "qma_x", Window: 100000, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	big := bytes.Repeat([]byte("x"), 1<<20) // a report of 1 MiB, the most the service takes
	for range 24 {
		o.Push(big)
	}
	q, _, _, dropped := o.Stats()
	if q*len(big) > agent.MaxOutboxBytes || dropped == 0 {
		t.Errorf("24 MiB of reports with the service down: %d kept (%d MiB), %d dropped; want at most %d MiB kept", q, q, dropped, agent.MaxOutboxBytes>>20)
	}
	if !strings.Contains(log.String(), "dropped the oldest reports") {
		t.Errorf("the log does not say reports were dropped:\n%s", log.String())
	}
}

// A 403 (the token is another node's, or the report's GPUs are another node's) and a 401 (the
// token is unknown or revoked) are two things to mend: when the service's refusal turns from one
// to the other, the log says the new one too.
func TestARefusalThatTurnsFrom403To401IsSaidAgain(t *testing.T) {
	var mu sync.Mutex
	status, answer := http.StatusForbidden, `{"error":"this token belongs to node gpu-01, not gpu-02"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	defer srv.Close()
	var log bytes.Buffer
	o := agent.NewOutbox(agent.OutboxConfig{URL: srv.URL, Token: "qma_x", Logger: slog.New(slog.NewTextHandler(&log, nil))})
	o.Push(body(1))
	for range 3 {
		_ = o.Flush(context.Background())
	}
	mu.Lock()
	status, answer = http.StatusUnauthorized, `{"error":"this token is unknown or revoked"}`
	mu.Unlock()
	for range 3 {
		_ = o.Flush(context.Background())
	}
	warn := warnings(log.String())
	if len(warn) != 2 || !strings.Contains(warn[0], "belongs to node gpu-01") || !strings.Contains(warn[1], "unknown or revoked") {
		t.Errorf("a 403, then a 401: want one warning for each:\n%s", log.String())
	}
}
