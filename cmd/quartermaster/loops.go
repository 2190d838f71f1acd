package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// loopOptions tune the lifecycle loops; zero values take the defaults.
type loopOptions struct {
	tick    time.Duration
	onTick  func(error)
	onPrune func(int64, error)
}

// startLoops runs the service's lifecycle loops until stop is called: what falls due (expiry,
// idle reclaim, approval timeouts), reconciling with the scheduler and refreshing its inventory,
// forgetting old message copies and keeping what the wait predictor learned. serve runs them, and
// so does the console on a real backend: wherever it runs, a lease's life is the same.
func startLoops(a *App, o loopOptions, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { tickLoop(ctx, a.Service, o.tick, o.onTick, log) })
	wg.Go(func() { reconcileLoop(ctx, a.Service, log, a.Metrics) })
	wg.Go(func() { pruneLoop(ctx, a, o.onPrune, log) })
	wg.Go(func() { flushLoop(ctx, a, log) })
	if a.Service.Outbox != nil {
		wg.Go(func() { noticeLoop(ctx, a.Service, log) })
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// noticeInterval is how often the sender loop looks for notices left in the outbox: after a crash,
// a failed delivery, or written by another replica whose own delivery did not get to them.
const noticeInterval = time.Second

// noticeLoop delivers what the outbox holds, now and every noticeInterval.
func noticeLoop(ctx context.Context, svc *qm.Service, log *slog.Logger) {
	t := time.NewTicker(noticeInterval)
	defer t.Stop()
	for {
		if n, err := svc.DeliverNotices(ctx); err != nil && ctx.Err() == nil {
			log.Warn("delivering notices from the outbox", "err", err, "sent", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
