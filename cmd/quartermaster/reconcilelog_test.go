package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/slurm"
)

// TestASchedulerFailingAlikeIsLoggedOnce: while every reconcile pass fails the same way (a
// controller that does not answer, credentials it refuses), serve's log says so once, not at every
// pass, and says once when the passes work again.
func TestASchedulerFailingAlikeIsLoggedOnce(t *testing.T) {
	a, err := NewApp(context.Background(), appOptions{flags: commonFlags{db: "sqlite:" + filepath.Join(t.TempDir(), "qm.db")}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cat, err := templateCatalog()
	if err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(p)
	}), nil))
	a.Service.Logger = log
	// Each pass asks squeue twice: for the inventory, then for the jobs. Three passes fail, the
	// fourth works.
	const failing, lastCall = 6, 8
	var mu sync.Mutex
	calls := 0
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	b, err := slurm.New(slurm.Config{Policy: a.Policy, Catalog: cat, Run: func(_ context.Context, _ []byte, name string, _ ...string) ([]byte, error) {
		if name != "squeue" {
			return []byte(`{"nodes": [], "errors": []}`), nil
		}
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == lastCall {
			stop()
		}
		if calls <= failing {
			return nil, errors.New("slurm_load_jobs error: Unable to contact slurm controller (connect failure)")
		}
		return []byte(`{"jobs": [], "errors": []}`), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	a.Service.Backend = b
	t.Setenv("QM_RECONCILE_INTERVAL", "1s") // the shortest it may be
	done := make(chan struct{})
	go func() { reconcileLoop(ctx, a.Service, log, nil); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the loop did not make its passes")
	}
	logMu.Lock()
	text := logs.String()
	logMu.Unlock()
	// Once by the inventory's read, once by the pass: not once a pass.
	if n := strings.Count(text, "Unable to contact slurm controller"); n > 2 {
		t.Errorf("%d passes failing alike were logged %d times, want once each by the inventory's read and the pass:\n%s", failing/2, n, text)
	}
	if n := strings.Count(text, "reconcile works again"); n != 1 {
		t.Errorf("the passes working again were logged %d times, want once:\n%s", n, text)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
