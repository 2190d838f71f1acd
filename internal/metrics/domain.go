package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// The domain's ports, wrapped: what passes through them is counted, and they behave exactly as
// the wrapped port does.

// Store wraps a store so that every lease transition a committed transaction made is counted:
// grants, reclaims, ends and approval decisions. A transaction that is retried or rolled back
// counts nothing. With a nil Metrics it returns st itself.
func (m *Metrics) Store(st qm.Store) qm.Store {
	if m == nil {
		return st
	}
	return &store{Store: st, m: m}
}

type store struct {
	qm.Store
	m *Metrics
}

// change is one lease write: the lease as written and the state it left.
type change struct {
	from  qm.State
	lease qm.Lease
}

func (s *store) Update(ctx context.Context, locks []string, fn func(qm.Tx) error) error {
	var changes []change
	err := s.Store.Update(ctx, locks, func(tx qm.Tx) error {
		changes = changes[:0] // a retried transaction starts over
		return fn(&tx2{Tx: tx, changes: &changes})
	})
	if err == nil {
		for _, c := range changes {
			s.m.transition(c.from, &c.lease)
		}
	}
	return err
}

// tx2 records the lease writes of one transaction.
type tx2 struct {
	qm.Tx
	changes *[]change
}

func (t *tx2) CreateLease(ctx context.Context, l *qm.Lease) error {
	err := t.Tx.CreateLease(ctx, l)
	if err == nil {
		*t.changes = append(*t.changes, change{from: "", lease: *l})
	}
	return err
}

func (t *tx2) CreateLeaseWithEvents(ctx context.Context, l *qm.Lease, es []*qm.Event) error {
	err := t.Tx.CreateLeaseWithEvents(ctx, l, es)
	if err == nil {
		*t.changes = append(*t.changes, change{from: "", lease: *l})
	}
	return err
}

func (t *tx2) UpdateLeaseWithEvent(ctx context.Context, l *qm.Lease, from qm.State, e *qm.Event) error {
	err := t.Tx.UpdateLeaseWithEvent(ctx, l, from, e)
	if err == nil && l.State != from {
		*t.changes = append(*t.changes, change{from: from, lease: *l})
	}
	return err
}

func (t *tx2) UpdateLease(ctx context.Context, l *qm.Lease, from qm.State) error {
	err := t.Tx.UpdateLease(ctx, l, from)
	if err == nil && l.State != from {
		*t.changes = append(*t.changes, change{from: from, lease: *l})
	}
	return err
}

// transition counts one committed state change.
func (m *Metrics) transition(from qm.State, l *qm.Lease) {
	to := l.State
	if l.Kind == qm.KindWorkspace && to == qm.Active && from != qm.Active && from != qm.IdleWarned {
		m.grants.WithLabelValues(l.Class).Inc()
	}
	if to == qm.Reclaimed {
		m.reclaims.WithLabelValues(l.Class).Inc()
		if l.Reclaimed > 0 {
			m.reclaimedHours.WithLabelValues(l.Class).Add(l.Reclaimed * 3600) // GPU-hours to GPU-seconds
		}
	}
	if to.Ended() && !from.Ended() {
		m.ended.WithLabelValues(l.Class, string(to)).Inc()
	}
	if from == qm.PendingApproval && to != qm.PendingApproval && l.DecidedBy != "" {
		outcome := "approved"
		switch {
		case to == qm.Denied && l.DecidedBy == qm.SystemActor:
			outcome = "expired"
		case to == qm.Denied:
			outcome = "denied"
		}
		m.decisions.WithLabelValues(outcome).Inc()
		if !l.DecidedAt.IsZero() && !l.CreatedAt.IsZero() {
			m.decisionSeconds.WithLabelValues(outcome).Observe(max(0, l.DecidedAt.Sub(l.CreatedAt)).Seconds())
		}
	}
}

// Backend wraps a scheduler backend so that each call is counted and timed under the backend's
// name. The wrapper is a qm.BackendWrapper: the service asks for every optional port with
// qm.BackendAs, which finds it on b itself, so the wrapper hides none and adds none; the wrapper
// stands in front of the ports whose calls it counts (a Watcher's, a Retimer's, an
// InventoryRefresher's, an instant start) and passes the others as b has them. With a nil Metrics
// it returns b itself.
func (m *Metrics) Backend(name string, b qm.Backend) qm.Backend {
	if m == nil || b == nil {
		return b
	}
	// Every call the wrapper can count exists at zero from now on, so an alert on the rate of
	// backend_errors_total fires at the first failure instead of missing it.
	ops := []string{"start", "stop"}
	if _, pings := qm.BackendAs[interface{ Ping(context.Context) error }](b); pings {
		ops = append(ops, "ping")
	}
	if _, watches := qm.BackendAs[qm.Watcher](b); watches {
		ops = append(ops, "jobs", "cancel")
	}
	if _, retimes := qm.BackendAs[qm.Retimer](b); retimes {
		ops = append(ops, "set_time_limit")
	}
	if _, refreshes := qm.BackendAs[qm.InventoryRefresher](b); refreshes {
		ops = append(ops, "refresh_inventory")
	}
	for _, op := range ops {
		m.backendCalls.WithLabelValues(name, op)
		m.backendErrors.WithLabelValues(name, op)
		m.backendSeconds.WithLabelValues(name, op)
	}
	return &backend{inner: b, name: name, m: m}
}

type backend struct {
	inner qm.Backend
	name  string
	m     *Metrics
}

var _ qm.BackendWrapper = (*backend)(nil)

func (b *backend) Unwrap() qm.Backend { return b.inner }

// Port stands in front of the ports whose calls are counted; it leaves the others as they are.
func (b *backend) Port(p any) {
	switch p := p.(type) {
	case *qm.InstantBackend:
		*p = &instantBackend{backend: b, ib: *p}
	case *qm.Watcher:
		*p = &watcher{backend: b, w: *p}
	case *qm.Retimer:
		*p = &retimer{backend: b, r: *p}
	case *qm.InventoryRefresher:
		*p = &refresher{backend: b, rf: *p}
	}
}

func (b *backend) observe(op string, start time.Time, err error) {
	b.m.BackendCall(b.name, op, time.Since(start), err)
}

func (b *backend) Inventory() []qm.Node { return b.inner.Inventory() }

func (b *backend) Start(ctx context.Context, l *qm.Lease) (qm.Started, error) {
	start := time.Now()
	st, err := b.inner.Start(ctx, l)
	b.observe("start", start, err)
	return st, err
}

func (b *backend) Stop(ctx context.Context, l *qm.Lease) error {
	start := time.Now()
	err := b.inner.Stop(ctx, l)
	b.observe("stop", start, err)
	return err
}

// Ping passes a readiness check through to the backend when it has one.
func (b *backend) Ping(ctx context.Context) error {
	p, ok := qm.BackendAs[interface{ Ping(context.Context) error }](b.inner)
	if !ok {
		return nil
	}
	start := time.Now()
	err := p.Ping(ctx)
	b.observe("ping", start, err)
	return err
}

type instantBackend struct {
	*backend
	ib qm.InstantBackend
}

func (b *instantBackend) StartsInstantly() bool { return b.ib.StartsInstantly() }

type watcher struct {
	*backend
	w qm.Watcher
}

func (b *watcher) Jobs(ctx context.Context) ([]qm.Job, error) {
	start := time.Now()
	jobs, err := b.w.Jobs(ctx)
	b.observe("jobs", start, err)
	return jobs, err
}

func (b *watcher) Cancel(ctx context.Context, j qm.Job) error {
	start := time.Now()
	err := b.w.Cancel(ctx, j)
	b.observe("cancel", start, err)
	return err
}

type retimer struct {
	*backend
	r qm.Retimer
}

func (b *retimer) SetTimeLimit(ctx context.Context, j qm.Job, d time.Duration) error {
	start := time.Now()
	err := b.r.SetTimeLimit(ctx, j, d)
	b.observe("set_time_limit", start, err)
	return err
}

type refresher struct {
	*backend
	rf qm.InventoryRefresher
}

func (b *refresher) RefreshInventory(ctx context.Context) error {
	start := time.Now()
	err := b.rf.RefreshInventory(ctx)
	b.observe("refresh_inventory", start, err)
	return err
}

// Waits wraps a wait predictor so that, when a lease that had a prediction starts, the distance
// between the predicted median and the real wait is recorded, and whether the wait fell within
// the 90% bound. With a nil Metrics it returns p itself.
func (m *Metrics) Waits(p qm.WaitPredictor) qm.WaitPredictor {
	if m == nil || p == nil {
		return p
	}
	return &waits{WaitPredictor: p, m: m, est: map[qm.LeaseID]qm.WaitEstimate{}}
}

type waits struct {
	qm.WaitPredictor
	m  *Metrics
	mu sync.Mutex
	// est holds the first prediction made for each lease, as the predictor itself keeps it.
	est map[qm.LeaseID]qm.WaitEstimate
}

// maxTracked bounds the predictions kept for leases that have not started or left yet.
const maxTracked = 100000

func (w *waits) Predict(now time.Time, req qm.WaitRequest, ahead []*qm.Lease, capacity int) qm.WaitEstimate {
	e := w.WaitPredictor.Predict(now, req, ahead, capacity)
	if req.Lease != 0 {
		w.mu.Lock()
		if _, seen := w.est[req.Lease]; !seen && len(w.est) < maxTracked {
			w.est[req.Lease] = e
		}
		w.mu.Unlock()
	}
	return e
}

func (w *waits) Started(l *qm.Lease, queuedAt time.Time) {
	w.WaitPredictor.Started(l, queuedAt)
	w.mu.Lock()
	e, ok := w.est[l.ID]
	delete(w.est, l.ID)
	w.mu.Unlock()
	if !ok || queuedAt.IsZero() || e.Unknown {
		return
	}
	start := l.StartedAt
	if start.IsZero() {
		start = queuedAt
	}
	wait := max(0, start.Sub(queuedAt))
	if wait < qm.WaitedInQueue {
		return // it started at once: told no wait, it is no hit of the bound
	}
	diff := wait - e.Median
	if diff < 0 {
		diff = -diff
	}
	w.m.predictionError.WithLabelValues(l.Class).Observe(diff.Seconds())
	within := "unbounded"
	if !e.MayNotStart && e.P90 > 0 {
		within = "false"
		if wait <= e.P90 {
			within = "true"
		}
	}
	w.m.predictionsOver.WithLabelValues(l.Class, within).Inc()
}

func (w *waits) Ended(l *qm.Lease) {
	w.WaitPredictor.Ended(l)
	w.forget(l.ID)
}

// Left counts a queued lease that left the queue unstarted after waiting past its predicted 90%
// bound as a miss, right-censored as the predictor and the showback count it; one that left
// within its bound tells nothing and is not counted.
func (w *waits) Left(l *qm.Lease, queuedAt time.Time) {
	w.WaitPredictor.Left(l, queuedAt)
	w.mu.Lock()
	e, ok := w.est[l.ID]
	delete(w.est, l.ID)
	w.mu.Unlock()
	if !ok || queuedAt.IsZero() || l.EndedAt.IsZero() || e.Unknown || e.MayNotStart || e.P90 <= 0 {
		return
	}
	if l.EndedAt.Sub(queuedAt) > e.P90 {
		w.m.predictionsOver.WithLabelValues(l.Class, "false").Inc()
	}
}

func (w *waits) forget(id qm.LeaseID) {
	w.mu.Lock()
	delete(w.est, id)
	w.mu.Unlock()
}
