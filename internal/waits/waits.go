// Package waits connects the lease service to the queue-wait predictor: one predictor per class,
// fed with every lease that starts, ends or leaves the queue, and asked for each quote, catalog
// line and queued reply.
package waits

import (
	"strconv"
	"sync"
	"time"

	"github.com/acme/quartermaster/internal/predict"
	"github.com/acme/quartermaster/internal/qm"
)

// Predictor implements qm.WaitPredictor over internal/predict.
type Predictor struct {
	mu      sync.Mutex
	byClass map[string]*predict.Predictor
	// estimates made for queued leases, handed back when they start or leave the queue
	estimates map[qm.LeaseID]predict.Estimate
}

var _ qm.WaitPredictor = (*Predictor)(nil)

// New returns a predictor with no history; it learns as leases come and go.
func New() *Predictor {
	return &Predictor{byClass: map[string]*predict.Predictor{}, estimates: map[qm.LeaseID]predict.Estimate{}}
}

func (w *Predictor) pool(class string) *predict.Predictor {
	p, ok := w.byClass[class]
	if !ok {
		p = predict.New(predict.Config{})
		w.byClass[class] = p
	}
	return p
}

func request(class, user, team string, gpus int, d time.Duration) predict.Request {
	return predict.Request{Queue: class, User: user, Team: team, GPUs: float64(gpus), Requested: d}
}

func key(id qm.LeaseID) string { return strconv.FormatInt(int64(id), 10) }

// Predict estimates a request's wait behind the leases queued ahead of it. A queued lease's
// estimate is kept, so the predictor learns from what became of it.
func (w *Predictor) Predict(now time.Time, req qm.WaitRequest, ahead []*qm.Lease, capacity int) qm.WaitEstimate {
	w.mu.Lock()
	p := w.pool(req.Class)
	queue := make([]predict.Pending, 0, len(ahead))
	for _, l := range ahead {
		queue = append(queue, predict.Pending{User: l.User, Team: l.Team, Queue: l.Class, GPUs: float64(l.GPUs),
			Submit: l.CreatedAt, Requested: l.Duration, Estimate: w.estimates[l.ID]})
	}
	w.mu.Unlock()
	est := p.Predict(request(req.Class, req.User, req.Team, req.GPUs, req.Duration),
		predict.State{Now: now, Capacity: float64(capacity), Queue: queue})
	if req.Lease != 0 {
		w.mu.Lock()
		if _, seen := w.estimates[req.Lease]; !seen {
			w.estimates[req.Lease] = est
		}
		w.mu.Unlock()
	}
	out := qm.WaitEstimate{Median: est.Median, P90: est.P90}
	if est.MayNotStart() {
		out.MayNotStart, out.Horizon, out.P90 = true, est.Horizon, 0
	}
	return out
}

// Started tracks a lease that began running and, if it was queued with an estimate, teaches the
// predictor how long it waited.
func (w *Predictor) Started(l *qm.Lease, queuedAt time.Time) {
	w.mu.Lock()
	p := w.pool(l.Class)
	est, ok := w.estimates[l.ID]
	delete(w.estimates, l.ID)
	w.mu.Unlock()
	start := l.StartedAt
	if start.IsZero() {
		start = queuedAt
	}
	req := request(l.Class, l.User, l.Team, l.GPUs, l.Duration)
	if ok && !queuedAt.IsZero() {
		p.Observe(predict.Observation{Request: req, Estimate: est, Wait: max(0, start.Sub(queuedAt)), Started: true})
	}
	p.Track(key(l.ID), predict.Lease{User: l.User, Team: l.Team, Queue: l.Class, GPUs: float64(l.GPUs), Start: start, Requested: l.Duration})
}

// Ended stops tracking a lease and teaches the predictor how long it really ran.
func (w *Predictor) Ended(l *qm.Lease) {
	w.mu.Lock()
	p := w.pool(l.Class)
	delete(w.estimates, l.ID) // one that failed while provisioning never started
	w.mu.Unlock()
	p.Untrack(key(l.ID))
	if !l.StartedAt.IsZero() && !l.EndedAt.IsZero() {
		p.ObserveRun(request(l.Class, l.User, l.Team, l.GPUs, l.Duration), l.EndedAt.Sub(l.StartedAt))
	}
}

// Left teaches the predictor that a queued lease never started.
func (w *Predictor) Left(l *qm.Lease, queuedAt time.Time) {
	w.mu.Lock()
	p := w.pool(l.Class)
	est, ok := w.estimates[l.ID]
	delete(w.estimates, l.ID)
	w.mu.Unlock()
	if ok && !l.EndedAt.IsZero() {
		p.Observe(predict.Observation{Request: request(l.Class, l.User, l.Team, l.GPUs, l.Duration), Estimate: est,
			Wait: max(0, l.EndedAt.Sub(queuedAt)), Started: false})
	}
}
