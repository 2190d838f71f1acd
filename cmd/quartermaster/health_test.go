package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// /readyz answers, not ready, when a check does not return once its time is up (a driver that
// waits for its own read deadline on a database that stopped answering), naming the check; it does
// not wait for the check.
func TestReadyzDoesNotWaitForACheckThatIgnoresItsDeadline(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	h := &health{a: &App{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, checks: []check{
		{"database postgres", func(context.Context) error { <-release; return nil }},
		{"backend sim", func(context.Context) error { return nil }},
	}}
	h.started.Store(true)
	rec := httptest.NewRecorder()
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		h.ready(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	}()
	select {
	case <-answered:
	case <-time.After(time.Minute): // far past the check's timeout: it waits for the check
		t.Fatal("/readyz still waits for a database check that does not return")
	}
	body := rec.Body.String()
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(body, "database postgres: failed: no answer within") || !strings.Contains(body, "backend sim: ok") {
		t.Errorf("/readyz with a database check that hangs: %d %q", rec.Code, body)
	}
}
