package qm

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// Defaults applied when a request leaves something out.
const (
	DefaultGPUs     = 1
	DefaultDuration = 4 * time.Hour
	// MaxRequestGPUs bounds any request; larger numbers are typos, not exceptions.
	MaxRequestGPUs = policy.MaxGPUs
	// MaxRequestDuration bounds any request.
	MaxRequestDuration = policy.MaxLease
	// TelemetryStale is how old a telemetry report may be before the lease counts as unobserved,
	// at least (see TelemetryStaleAfter).
	TelemetryStale = 10 * time.Minute
	// TelemetryStaleIntervals is how many of its reporting intervals a node agent may miss before
	// its leases count as unobserved, where that is longer than TelemetryStale.
	TelemetryStaleIntervals = 3
)

// TelemetryStaleAfter is how old a's report may be before the lease counts as unobserved:
// TelemetryStale, or TelemetryStaleIntervals of the reporting interval when that is longer, so
// that a node agent reporting every few minutes is not taken for one that stopped.
func TelemetryStaleAfter(a Activity) time.Duration {
	return max(TelemetryStale, TelemetryStaleIntervals*a.Interval)
}

// Service is the lease service: admission, lifecycle and approvals.
type Service struct {
	Policy    *policy.Policy
	Store     Store
	Backend   Backend
	Clock     Clock
	Notifier  Notifier
	Telemetry Telemetry
	Directory Directory
	Logger    *slog.Logger
	// Waits predicts queue waits; nil falls back to the known expiries of running leases.
	Waits WaitPredictor
	// Outbox, when set, makes notices durable: written with the change that causes them and
	// delivered from the database (see outbox.go). Nil delivers them directly after the commit.
	Outbox Outbox
	// SenderName names this process in the outbox's claims (a host name and process id).
	SenderName string
	// DeliverInBackground, with an Outbox, lets a command return as soon as its change is
	// committed: the notices the change staged are delivered by a goroutine of their own (and,
	// should that fail or the process stop, by the sender loop), so nobody waits for the notices
	// their command caused, which chat platforms pace. WaitNotices waits for those goroutines.
	DeliverInBackground bool
	// Topology, when set, gives the nodes' GPU topology as their node agents report it: placement
	// fills in the NVLink islands and NUMA nodes the backend's inventory does not know (see
	// placement_topology.go).
	Topology TopologySource
	// Rules evaluates the exception rules; nil: the policy's (Policy.Evaluate).
	Rules RuleEvaluator
	// SubmitGrace is how long a provisioning lease may wait for its job before the reconcile pass
	// takes it that the service stopped before submitting it; zero means DefaultSubmitGrace.
	SubmitGrace time.Duration
	// Submitter names this process in its claims on submissions (Lease.SubmittingBy), so that a
	// process that starts after it on the same host can release them at once should it stop
	// mid-submission; empty names none, and such claims only lapse.
	Submitter string

	topo topologyCache

	stats noticeStats
	bg    sync.WaitGroup
	// inventoryRead is set once the scheduler's inventory has been read (readInventory).
	inventoryRead atomic.Bool
	// inventoryReadAt is when (Unix nanoseconds, 0: never) a read of the inventory last
	// succeeded: what the service shows of the scheduler's GPUs while it does not answer is
	// from then (ClassStatus.AsOf).
	inventoryReadAt atomic.Int64
	// inventoryFailedAt is when (Unix nanoseconds, 0: never) a read of the inventory last
	// failed; inventoryMu lets one command read it at a time (readInventory).
	inventoryFailedAt atomic.Int64
	inventoryMu       sync.Mutex
	// inventoryErr is what the last failed read of the inventory said, logged once for a run of
	// reads failing alike (nil after one that succeeds).
	inventoryErr atomic.Pointer[string]
	// schedulerAway is set when a job could not be handed to the scheduler because it did not
	// answer (Unreachable), and cleared by the next inventory refresh that succeeds: meanwhile the
	// tick hands it no lease of its queue.
	schedulerAway atomic.Bool
	// starting holds the leases whose Backend.Start runs in this process now (start): their
	// job may already run before Start has recorded it and how to reach it.
	starting sync.Map
	// unreachableNames are the policy's names that reach nobody, logged once (unreachable).
	unreachableNames sync.Map
	// sweepFails are the leases whose leftovers the last sweeps could not delete (sweepLeftovers).
	sweepMu    sync.Mutex
	sweepFails map[LeaseID]*sweepFail
}

// inventoryRetry is how long after a failed read of the scheduler's inventory the commands
// leave it to the reconcile loop: each ask of a scheduler that does not answer can take seconds.
const inventoryRetry = 30 * time.Second

// readInventory reads the scheduler's inventory when nothing has read it yet: a request, a
// catalog or an estimate that comes in the seconds after a start, before the reconcile loop's
// first pass, is counted, placed and quoted on the scheduler's nodes as any later one is. A
// failed read is left to that loop for inventoryRetry, so that a command asks a scheduler that
// does not answer once, not once more for every class it counts, and the commands that come
// meanwhile do not ask at all; commands that come together wait for one read.
func (s *Service) readInventory(ctx context.Context) {
	r, ok := BackendAs[InventoryRefresher](s.Backend)
	if !ok || s.inventoryRead.Load() {
		return
	}
	if len(s.Backend.Inventory()) > 0 {
		s.inventoryRead.Store(true)
		s.inventoryReadAt.CompareAndSwap(0, s.Clock.Now().UnixNano())
		return
	}
	s.inventoryMu.Lock()
	defer s.inventoryMu.Unlock()
	if s.inventoryRead.Load() || s.inventoryFailedRecently() {
		return
	}
	if err := r.RefreshInventory(ctx); err != nil {
		s.inventoryFailed(err)
		return
	}
	s.inventorySucceeded()
	s.inventoryErr.Store(nil)
}

// inventorySucceeded records a read of the scheduler's inventory that succeeded.
func (s *Service) inventorySucceeded() {
	s.inventoryRead.Store(true)
	s.inventoryReadAt.Store(s.Clock.Now().UnixNano())
}

// lastAnswer is when the scheduler's inventory was last read (zero: never).
func (s *Service) lastAnswer() time.Time {
	if at := s.inventoryReadAt.Load(); at != 0 {
		return time.Unix(0, at).UTC()
	}
	return time.Time{}
}

// inventoryFailed records a failed read of the scheduler's inventory.
func (s *Service) inventoryFailed(err error) {
	// Logged once for a run of reads failing alike, not once a reconcile pass.
	said := err.Error()
	if was := s.inventoryErr.Swap(&said); was == nil || *was != said {
		s.log().Warn("read the scheduler's inventory; logged again once it fails otherwise or works", "err", err)
	}
	s.inventoryFailedAt.Store(s.Clock.Now().UnixNano())
}

// schedulerSilent reports whether the scheduler does not answer now: a job could not be handed
// to it (Unreachable), or the last read of its inventory failed, and no read succeeded since.
func (s *Service) schedulerSilent() bool {
	return s.schedulerAway.Load() || s.inventoryErr.Load() != nil
}

// inventoryFailedRecently reports whether a read of the inventory failed within inventoryRetry.
func (s *Service) inventoryFailedRecently() bool {
	at := s.inventoryFailedAt.Load()
	return at != 0 && s.Clock.Now().Sub(time.Unix(0, at)) < inventoryRetry
}

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

func (s *Service) notify(ctx context.Context, ns []Notice) {
	if s.Notifier == nil {
		return
	}
	for _, n := range ns {
		if err := s.notifyErr(ctx, n); err != nil {
			s.log().Error("notice not delivered", "kind", n.Kind, "lease", n.LeaseID(), "err", err)
		}
	}
}

// notifyErr delivers one notice and says whether it was delivered, where the notifier can tell.
func (s *Service) notifyErr(ctx context.Context, n Notice) error {
	if c, ok := s.Notifier.(CheckedNotifier); ok {
		return c.NotifyChecked(ctx, n)
	}
	s.Notifier.Notify(ctx, n)
	return nil
}
