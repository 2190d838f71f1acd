package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// syncBuffer is a buffer the service's log may write to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A service that starts on a policy that no longer has the team of a request waiting for
// approval (the team was renamed or removed) says so in its log: which requests, of which team,
// and who decides them now (the fallback approvers), so that an admin is not left to find out
// from a budget owner who cannot decide them.
func TestServeNamesWaitingRequestsOfATeamThePolicyNoLongerHas(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "qm.db")
	old := "../../commands/testdata/harbor.yaml"
	a, err := NewApp(context.Background(), appOptions{flags: commonFlags{policy: old, db: db}})
	if err != nil {
		t.Fatal(err)
	}
	rs := a.Bot.Handle(context.Background(), bot.Request{User: "mere@harbor.example", Text: "/gpu request 3 bench for 2h"})
	if len(rs) == 0 || !strings.Contains(rs[0].Text, "L-1 waits for approval") {
		t.Fatalf("the request did not wait for approval: %v", rs)
	}
	a.Close()

	b, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	renamed := filepath.Join(dir, "harbor.yaml")
	if err := os.WriteFile(renamed, []byte(strings.Replace(string(b), "  - name: kelp\n", "  - name: kelp-lab\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	s := startServe(t, serveOptions{app: appOptions{flags: commonFlags{policy: renamed, db: db}, logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "L-1 waits for approval") { // not the lines of its notice's delivery
			line = l
		}
	}
	for _, want := range []string{"level=WARN", "team kelp", "harbor-ops@harbor.example"} {
		if !strings.Contains(line, want) {
			t.Errorf("the log line about L-1 %q does not say %q; the log:\n%s", line, want, logs.String())
		}
	}
}

// serve hands a waiting request of a team the policy no longer lists to the fallback approvers
// once: started twice on the new policy, its history has one hand-over, and the fallback
// approver's notice of it was written once.
func TestServeHandsARequestOfAGoneTeamToTheFallbackApproversOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "qm.db")
	old := "../../commands/testdata/harbor.yaml"
	a, err := NewApp(context.Background(), appOptions{flags: commonFlags{policy: old, db: db}})
	if err != nil {
		t.Fatal(err)
	}
	rs := a.Bot.Handle(context.Background(), bot.Request{User: "mere@harbor.example", Text: "/gpu request 3 bench for 2h"})
	if len(rs) == 0 || !strings.Contains(rs[0].Text, "L-1 waits for approval") {
		t.Fatalf("the request did not wait for approval: %v", rs)
	}
	a.Close()
	b, err := os.ReadFile(old)
	if err != nil {
		t.Fatal(err)
	}
	renamed := filepath.Join(dir, "harbor.yaml")
	if err := os.WriteFile(renamed, []byte(strings.Replace(string(b), "  - name: kelp\n", "  - name: kelp-lab\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s := startServe(t, serveOptions{app: appOptions{flags: commonFlags{policy: renamed, db: db}}})
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
	}
	a, err = NewApp(context.Background(), appOptions{flags: commonFlags{policy: renamed, db: db}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rs = a.Bot.Handle(context.Background(), bot.Request{User: "harbor-ops@harbor.example", Text: "/gpu status L-1"})
	if len(rs) == 0 {
		t.Fatal("no reply")
	}
	hist := rs[0].PlainText()
	if n := strings.Count(hist, "the fallback approvers decide it"); n != 1 {
		t.Errorf("after two starts L-1's history has %d hand-overs to the fallback approvers, want 1:\n%s", n, hist)
	}
}
