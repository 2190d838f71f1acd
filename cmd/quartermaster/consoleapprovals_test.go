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
)

// egretPolicy has other names than the example's: team herons, whose budget owner is gil, decides
// requests longer than the class allows.
const egretPolicy = `organization: Egret Labs
classes:
  - {name: pond, sku: L4, price_per_gpu_hour: 1, max_gpus: 2, max_duration: 4h}
default_quota: {gpus: {pond: 1}, gpu_hours_per_week: 100}
teams:
  - {name: herons, idp_groups: [g-herons], budget_owners: [gil@egret.example], quota: {gpus: {pond: 2}, gpu_hours_per_week: 100}, data_classes: [open]}
exceptions:
  - {name: long-run, when: request.duration > class.max_duration, why: Longer than the class allows}
approvals: {timeout: 24h, fallback_approvers: [desk@egret.example]}
directory:
  - {user: oda@egret.example, groups: [g-herons]}
  - {user: gil@egret.example, groups: [g-herons]}
  - {user: desk@egret.example, groups: [g-desk]}
sim:
  nodes: [{name: l4, count: 1, class: pond, gpus: 2}]
`

// A request made in the console waits for approval; the console printed its approval message,
// which no chat delivered. serve, started on that database with the same policy, sends it to the
// approvers once, and its log says why: it reached no approver in chat, not that the policy
// names new approvers. A second start sends it to nobody again.
func TestServeSendsAConsoleRequestToItsApproversOnceSayingWhy(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "egret.yaml")
	if err := os.WriteFile(pol, []byte(egretPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(dir, "qm.db")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"console", "--policy", pol, "--db", db, "--reports", t.TempDir()},
		strings.NewReader("oda@egret.example: /gpu request 1 pond 6h\n"), &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "gil@egret.example") {
		t.Fatalf("console: exit %d, %s%s; want the request sent to gil for approval", code, out.String(), errb.String())
	}
	start := func() string {
		var mu sync.Mutex
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return logs.Write(p)
		}), nil))
		var app *App
		s := startServe(t, serveOptions{app: appOptions{flags: commonFlags{db: db, policy: pol}, logger: log}, onApp: func(a *App) { app = a }})
		// What serve does once at start, done again here to its end: a request sent already
		// is not sent again.
		app.Bot.RetireFormerApprovers(context.Background())
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return logs.String()
	}
	first := start()
	if strings.Contains(first, "a new policy names") {
		t.Errorf("serve says the policy names new approvers of a request the policy did not change:\n%s", first)
	}
	if n := strings.Count(first, `msg="sent a request no chat had delivered to its approvers`); n != 1 || !strings.Contains(first, "lease=L-1") {
		t.Errorf("serve's first start logged %d lines saying it sent L-1 to its approvers as no chat had delivered it, want one:\n%s", n, first)
	}
	if second := start(); strings.Contains(second, "sent a request") {
		t.Errorf("a second start sent the request again:\n%s", second)
	}
}
