package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// readyCheckTimeout bounds each readiness check, so /readyz answers within it even when the
// database or the scheduler hangs instead of refusing.
const readyCheckTimeout = 2 * time.Second

// health serves /healthz, /readyz and /metrics.
//
// /healthz is liveness: the process runs and its HTTP server answers. It does not look at the
// database, so an outage there does not get every replica restarted at once.
// /readyz is readiness: the service has started, the database answers a query and the scheduler
// backend answers its own check (scontrol ping, the Kubernetes API's /version); the body names
// each check and what failed. A load balancer sends chat traffic only to ready replicas.
type health struct {
	a       *App
	started atomic.Bool
	checks  []check
}

type check struct {
	name string
	run  func(ctx context.Context) error
}

type pinger interface {
	Ping(ctx context.Context) error
}

func newHealth(a *App) *health {
	h := &health{a: a}
	h.checks = append(h.checks, check{"database " + a.Store.Dialect(), a.Store.Ping})
	if p, ok := a.Service.Backend.(pinger); ok {
		h.checks = append(h.checks, check{"backend " + a.BackendName, p.Ping})
	}
	return h
}

func (h *health) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", h.live)
	mux.HandleFunc("GET /readyz", h.ready)
	mux.Handle("GET /metrics", h.a.Metrics.Handler())
}

func (h *health) live(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// ready runs every check at once, each bounded by readyCheckTimeout, and answers 200 when all
// pass, 503 otherwise, with one line per check.
func (h *health) ready(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !h.started.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "not ready: starting or stopping")
		return
	}
	errs := make([]error, len(h.checks))
	var wg sync.WaitGroup
	for i, c := range h.checks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), readyCheckTimeout)
			defer cancel()
			// A check is not waited for past its timeout: PostgreSQL's driver, on a connection
			// to a server that stopped answering, returns only at its own read deadline (the
			// statement timeout and a grace), long after the context ended.
			done := make(chan error, 1)
			go func() { done <- c.run(ctx) }()
			select {
			case errs[i] = <-done:
			case <-ctx.Done():
				errs[i] = fmt.Errorf("no answer within %s", readyCheckTimeout)
			}
		})
	}
	wg.Wait()
	var b strings.Builder
	failed := 0
	for i, c := range h.checks {
		if errs[i] != nil {
			failed++
			fmt.Fprintf(&b, "%s: failed: %s\n", c.name, oneLine(errs[i].Error()))
			continue
		}
		fmt.Fprintf(&b, "%s: ok\n", c.name)
	}
	if failed > 0 {
		h.a.Logger.Warn("not ready", "failed", failed, "checks", strings.TrimSpace(b.String()))
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready\n%s", b.String())
		return
	}
	fmt.Fprintf(w, "ready\n%s", b.String())
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
