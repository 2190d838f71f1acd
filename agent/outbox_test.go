package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/report"
)

// fakeService answers reports with a status the test sets, and records what it took.
type fakeService struct {
	mu     sync.Mutex
	status int
	got    []int // the seq of every report answered 200, in order
	tokens []string
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var rep report.Report
	_ = json.Unmarshal(body, &rep)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens = append(f.tokens, r.Header.Get("Authorization"))
	if f.status != http.StatusOK {
		w.WriteHeader(f.status)
		fmt.Fprintf(w, `{"error":"status %d"}`, f.status)
		return
	}
	f.got = append(f.got, int(rep.Seq))
	_ = json.NewEncoder(w).Encode(report.Response{Accepted: true, TopologyWanted: rep.Seq == 2})
}

func (f *fakeService) set(status int) { f.mu.Lock(); f.status = status; f.mu.Unlock() }

func (f *fakeService) received() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.got...)
}

func body(seq int) []byte {
	b, _ := json.Marshal(report.Report{Version: report.Version, Node: "n1", Seq: uint64(seq)})
	return b
}

// A short outage loses nothing: the reports wait and go in order once the service is back. A long
// one keeps the newest Window reports, drops the oldest and says so in the log. A report the service
// refuses as bad is dropped; a refused token keeps everything for a retry.
func TestOutboxKeepsOrderAndWindow(t *testing.T) {
	svc := &fakeService{status: http.StatusServiceUnavailable}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	var logs bytes.Buffer
	var wanted []bool
	o := agent.NewOutbox(agent.OutboxConfig{URL: srv.URL + "/", Token: "qma_x", Window: 5,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), OnResponse: func(r report.Response) { wanted = append(wanted, r.TopologyWanted) }})
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		o.Push(body(i))
		if err := o.Flush(ctx); err == nil {
			t.Fatal("flush succeeded with the service down")
		}
	}
	svc.set(http.StatusOK)
	if err := o.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := svc.received(); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("after a short outage the service got %v, want 1 2 3 in order", got)
	}
	if !slices.Equal(wanted, []bool{false, true, false}) {
		t.Errorf("the service's answers reached the agent as %v", wanted)
	}
	if svc.tokens[0] != "Bearer qma_x" {
		t.Errorf("Authorization = %q", svc.tokens[0])
	}

	svc.set(http.StatusBadGateway)
	for i := 4; i <= 12; i++ {
		o.Push(body(i))
		_ = o.Flush(ctx)
	}
	if q, _, _, dropped := o.Stats(); q != 5 || dropped != 4 {
		t.Fatalf("after a long outage %d queued, %d dropped; want the window of 5 and 4 dropped", q, dropped)
	}
	if !strings.Contains(logs.String(), "dropped the oldest reports") {
		t.Errorf("the log does not say reports were dropped:\n%s", logs.String())
	}
	svc.set(http.StatusUnauthorized)
	if err := o.Flush(ctx); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("a refused token: %v", err)
	}
	svc.set(http.StatusOK)
	if err := o.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := svc.received(); !slices.Equal(got[3:], []int{8, 9, 10, 11, 12}) {
		t.Fatalf("after the long outage the service got %v, want the newest five, 8-12, in order", got[3:])
	}

	svc.set(http.StatusBadRequest)
	o.Push(body(13))
	if err := o.Flush(ctx); err != nil {
		t.Fatalf("a refused report should be dropped, not retried: %v", err)
	}
	if q, sent, refused, _ := o.Stats(); q != 0 || sent != 8 || refused != 1 {
		t.Errorf("queued %d sent %d refused %d; want 0, 8, 1", q, sent, refused)
	}
}

// Run retries on its own with backoff until the service answers.
func TestOutboxRunRetries(t *testing.T) {
	svc := &fakeService{status: http.StatusServiceUnavailable}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	o := agent.NewOutbox(agent.OutboxConfig{URL: srv.URL, Token: "t"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { o.Run(ctx); close(done) }()
	o.Push(body(1))
	o.Push(body(2))
	time.Sleep(200 * time.Millisecond)
	svc.set(http.StatusOK)
	deadline := time.Now().Add(30 * time.Second)
	for len(svc.received()) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	if got := svc.received(); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("the service got %v, want 1 2", got)
	}
}

// A 404 means the --service URL is wrong (no report endpoint there), not that the report is bad:
// the reports are kept for a retry, none is counted refused, and the log says once that the URL
// is likely wrong.
func TestOutboxWrongServiceURL(t *testing.T) {
	svc := &fakeService{status: http.StatusNotFound}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	var mu sync.Mutex
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	o := agent.NewOutbox(agent.OutboxConfig{URL: srv.URL + "/quartermaster", Token: "t", Logger: log})
	o.Push(body(1))
	err := o.Flush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "--service") {
		t.Fatalf("a 404: %v; want the error to name --service", err)
	}
	// The URL was given a path the service does not have: the example is its base without it.
	if !strings.HasSuffix(err.Error(), "e.g. --service "+srv.URL) {
		t.Errorf("a 404 under a path: %v; want the example --service %s", err, srv.URL)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { o.Run(ctx); close(done) }()
	for i := 2; i <= 4; i++ {
		o.Push(body(i))
		time.Sleep(700 * time.Millisecond) // past the first retry
	}
	cancel()
	<-done
	if q, sent, refused, _ := o.Stats(); q != 4 || sent != 0 || refused != 0 {
		t.Errorf("queued %d sent %d refused %d; want all 4 kept, none refused", q, sent, refused)
	}
	mu.Lock()
	text := logs.String()
	mu.Unlock()
	if n := strings.Count(text, "level=WARN"); n != 1 || !strings.Contains(text, "--service") || strings.Contains(text, "refused") {
		t.Errorf("the log (%d warnings) should say once that --service is likely wrong:\n%s", n, text)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Each attempt to send a report says the node's clock at that moment, not when the report was
// taken: a report that waited through an outage still lets the service tell the node's clock
// from the wait.
func TestOutboxSaysTheNodesClockWhenItSends(t *testing.T) {
	var mu sync.Mutex
	status, sent := http.StatusServiceUnavailable, []string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, r.Header.Get(report.SentAtHeader))
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"accepted":true}`))
	}))
	defer srv.Close()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	o := agent.NewOutbox(agent.OutboxConfig{URL: srv.URL, Token: "qma_x", Now: func() time.Time { return now }})
	o.Push(body(1))
	if err := o.Flush(context.Background()); err == nil {
		t.Fatal("flush succeeded with the service down")
	}
	now = now.Add(3 * time.Minute)
	mu.Lock()
	status = http.StatusOK
	mu.Unlock()
	if err := o.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"2026-11-30T09:00:00Z", "2026-11-30T09:03:00Z"}
	if !slices.Equal(sent, want) {
		t.Errorf("%s headers = %q, want %q", report.SentAtHeader, sent, want)
	}
}

// A --service that is not the Quartermaster service but answers 200 anyway (a login proxy in
// front of it, whose redirect ends on its sign-in page; a default web page) has not taken the
// report: the report is kept for a retry, not counted as sent, and the error names --service.
func TestOutboxA200ThatIsNotTheServiceIsNotSent(t *testing.T) {
	login := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/sign-in" {
			http.Redirect(w, r, "/sign-in", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html><body>Sign in</body></html>")
	}))
	defer login.Close()
	o := agent.NewOutbox(agent.OutboxConfig{URL: login.URL, Token: "t"})
	o.Push(body(1))
	err := o.Flush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "--service") {
		t.Errorf("a sign-in page answered the report: %v; want an error naming --service", err)
	}
	if q, sent, refused, _ := o.Stats(); q != 1 || sent != 0 || refused != 0 {
		t.Errorf("queued %d sent %d refused %d; want the report kept, not sent", q, sent, refused)
	}
}

// tokenService takes only reports that carry the token it holds now, as the service does after
// `agent-token revoke` and `create`.
type tokenService struct {
	mu    sync.Mutex
	token string
	got   []int
}

func (f *tokenService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var rep report.Report
	_ = json.NewDecoder(r.Body).Decode(&rep)
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"this token is unknown or revoked"}`)
		return
	}
	f.got = append(f.got, int(rep.Seq))
	_ = json.NewEncoder(w).Encode(report.Response{Accepted: true})
}

// A node's token replaced in its token file (revoked and created again, and the Kubernetes Secret
// updated) is read again once the service refuses the old one, so the reports kept meanwhile go
// through without a restart, in order; the log says the new token was read.
func TestOutboxReadsARotatedTokenFile(t *testing.T) {
	svc := &tokenService{token: "qma_new"}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "gpu-01")
	if err := os.WriteFile(file, []byte("qma_old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	o := agent.NewOutbox(agent.OutboxConfig{URL: srv.URL, Token: "qma_old", TokenFile: file,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	o.Push(body(1))
	o.Push(body(2))
	ctx := context.Background()
	if err := o.Flush(ctx); err == nil {
		t.Fatal("the old token was taken")
	}
	if err := o.Flush(ctx); err == nil {
		t.Fatal("the old token was taken")
	}
	if err := os.WriteFile(file, []byte("qma_new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := o.Flush(ctx); err != nil {
		t.Fatalf("with the new token in %s: %v", file, err)
	}
	svc.mu.Lock()
	got := slices.Clone(svc.got)
	svc.mu.Unlock()
	if !slices.Equal(got, []int{1, 2}) {
		t.Errorf("the service took %v, want 1 2", got)
	}
	if !strings.Contains(log.String(), "read a new token") || !strings.Contains(log.String(), file) {
		t.Errorf("the log does not say the new token was read:\n%s", log.String())
	}
}

// A token file that cannot be read again after the service refused the token gets the same
// advice as the agent's --token-file at start: here, that the file does not exist and what to put
// in it.
func TestOutboxSaysWhatToDoWhenTheTokenFileIsGone(t *testing.T) {
	svc := &tokenService{token: "qma_new"}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "gpu-01")
	var log bytes.Buffer
	o := agent.NewOutbox(agent.OutboxConfig{URL: srv.URL, Token: "qma_old", TokenFile: file,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	o.Push(body(1))
	ctx := context.Background()
	for range 2 {
		if err := o.Flush(ctx); err == nil {
			t.Fatal("the old token was taken")
		}
	}
	want := "--token-file names " + file + ", which does not exist; put the token `quartermaster agent-token create NODE` prints alone in it"
	if !strings.Contains(log.String(), want) && !strings.Contains(log.String(), strconv.Quote(want)[1:len(strconv.Quote(want))-1]) {
		t.Errorf("the log does not say what to do about the missing token file:\n%s", log.String())
	}
}
