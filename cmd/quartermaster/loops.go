package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
	wg.Go(func() {
		releaseStoppedSubmitters(ctx, a, log)
		reconcileLoop(ctx, a.Service, log, a.Metrics)
	})
	wg.Go(func() { pruneLoop(ctx, a, o.onPrune, log) })
	wg.Go(func() { flushLoop(ctx, a, log) })
	if a.Service.Outbox != nil {
		wg.Go(func() {
			releaseStoppedSenders(ctx, a, log)
			noticeLoop(ctx, a.Service, log)
		})
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

// releaseStoppedSenders takes back, at start, the notices that a sender on this host held when it
// stopped (killed, or the container restarted): its process no longer runs, or it had this
// process's id (a restarted container's first process). They go out at once, each counted as a
// possible repeat, instead of after their claim lapses. Claims of other hosts are left to lapse.
func releaseStoppedSenders(ctx context.Context, a *App, log *slog.Logger) {
	now := a.Clock.Now()
	owners, err := a.Store.NoticeClaimers(ctx, now)
	if err != nil {
		log.Warn("reading the outbox's claims", "err", err)
		return
	}
	stopped := stoppedOnThisHost(owners, "")
	if len(stopped) == 0 {
		return
	}
	n, err := a.Store.ReleaseNoticeClaims(ctx, stopped, now)
	if err != nil {
		log.Warn("taking back the notices of stopped senders", "err", err)
		return
	}
	log.Info("took back the notices that stopped senders on this host held", "senders", strings.Join(stopped, ","), "notices", n)
}

// processStarted tells this process from an earlier one on the same host with the same process
// id (a restarted container's first process) in the claims on submissions.
var processStarted = time.Now().UnixNano()

// submitterName names this process in its claims on leases' submissions: host/pid@start.
func submitterName() string {
	return fmt.Sprintf("%s@%d", senderName(), processStarted)
}

// releaseStoppedSubmitters releases, at start and before the first reconcile pass, the claims on
// leases' submissions that processes on this host held when they stopped (killed mid-submission,
// or the container restarted): that pass then adopts at once the job such a process submitted and
// did not record, instead of after the claim lapses (QM_SUBMIT_GRACE). This process's own claims
// (its commands may run already) and other hosts' are left; theirs lapse.
func releaseStoppedSubmitters(ctx context.Context, a *App, log *slog.Logger) {
	owners, err := a.Store.SubmissionClaimers(ctx, a.Clock.Now())
	if err != nil {
		log.Warn("reading the claims on submissions", "err", err)
		return
	}
	host, _ := os.Hostname()
	var stopped []string
	for _, o := range owners {
		name, _, _ := strings.Cut(o, "@")
		if o != a.Service.Submitter && senderStopped(name, host) {
			stopped = append(stopped, o)
		}
	}
	if len(stopped) == 0 {
		return
	}
	n, err := a.Store.ReleaseSubmissionClaims(ctx, stopped)
	if err != nil {
		log.Warn("releasing the claims on submissions of stopped processes", "err", err)
		return
	}
	log.Info("released the claims on submissions that stopped processes on this host held", "processes", strings.Join(stopped, ","), "leases", n)
}

// stoppedOnThisHost are the owners ("host/pid") of claims that ran on this host and have stopped,
// but for except (a claim's owner that must be taken as running).
func stoppedOnThisHost(owners []string, except string) []string {
	host, _ := os.Hostname()
	var stopped []string
	for _, o := range owners {
		if o != except && senderStopped(o, host) {
			stopped = append(stopped, o)
		}
	}
	return stopped
}

// senderStopped reports whether the sender named owner ("host/pid") ran on host and has stopped.
func senderStopped(owner, host string) bool {
	i := strings.LastIndexByte(owner, '/')
	if i < 0 || owner[:i] != host {
		return false
	}
	pid, err := strconv.Atoi(owner[i+1:])
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true // this process has claimed nothing yet: an earlier life with the same id
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
