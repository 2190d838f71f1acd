// Package waits connects the lease service to the queue-wait predictor: one predictor per class,
// fed with every lease that starts, ends or leaves the queue, and asked for each quote, catalog
// line and queued reply.
package waits

import (
	"context"
	"encoding/json"
	"fmt"
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
	hist      History
	unsaved   []saved // outcomes learned since the last Flush
}

// History keeps what the predictor learned across restarts: one opaque record per outcome, by
// class (internal/store implements it).
type History interface {
	AddWaitRecord(ctx context.Context, class string, at time.Time, record []byte) error
	WaitRecords(ctx context.Context, since time.Time, each func(class string, record []byte) error) error
}

// record is one outcome as the History keeps it: the request, the situation it was estimated in,
// and how long it waited before it started or left the queue.
type record struct {
	User      string            `json:"user,omitempty"`
	Team      string            `json:"team,omitempty"`
	GPUs      int               `json:"gpus"`
	Duration  time.Duration     `json:"duration"`
	Situation predict.Situation `json:"situation"`
	Wait      time.Duration     `json:"wait"`
	Started   bool              `json:"started"`
}

type saved struct {
	class string
	at    time.Time
	rec   record
}

// maxUnsaved bounds the outcomes waiting for Flush; past it the oldest are not kept.
const maxUnsaved = 4096

// SetHistory has the predictor keep its outcomes in h, written by Flush.
func (w *Predictor) SetHistory(h History) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.hist = h
}

// Load teaches the predictor the outcomes kept in its History since the given moment, as if it
// had seen them (the bound's online correction starts afresh), and says how many it read.
// Records it cannot read are passed over.
func (w *Predictor) Load(ctx context.Context, since time.Time) (int, error) {
	w.mu.Lock()
	h := w.hist
	w.mu.Unlock()
	if h == nil {
		return 0, nil
	}
	n := 0
	err := h.WaitRecords(ctx, since, func(class string, raw []byte) error {
		var r record
		if json.Unmarshal(raw, &r) != nil {
			return nil
		}
		w.mu.Lock()
		p := w.pool(class)
		w.mu.Unlock()
		p.Remember(predict.Observation{Request: request(class, r.User, r.Team, r.GPUs, r.Duration),
			Estimate: predict.Estimate{Situation: r.Situation}, Wait: r.Wait, Started: r.Started})
		n++
		return nil
	})
	return n, err
}

// Flush writes the outcomes learned since the last Flush to the History. Those it could not write
// are kept for the next one.
func (w *Predictor) Flush(ctx context.Context) error {
	w.mu.Lock()
	h, todo := w.hist, w.unsaved
	w.unsaved = nil
	w.mu.Unlock()
	if h == nil {
		return nil
	}
	for i, s := range todo {
		raw, err := json.Marshal(s.rec)
		if err == nil {
			err = h.AddWaitRecord(ctx, s.class, s.at, raw)
		}
		if err != nil {
			w.mu.Lock()
			w.unsaved = append(todo[i:], w.unsaved...)
			if over := len(w.unsaved) - maxUnsaved; over > 0 {
				w.unsaved = w.unsaved[over:]
			}
			w.mu.Unlock()
			return fmt.Errorf("waits: keeping the history: %w", err)
		}
	}
	return nil
}

// keep queues an outcome for the History. Call with w.mu held.
func (w *Predictor) keep(class string, at time.Time, est predict.Estimate, req predict.Request, wait time.Duration, started bool) {
	if w.hist == nil {
		return
	}
	if len(w.unsaved) >= maxUnsaved {
		w.unsaved = w.unsaved[1:]
	}
	w.unsaved = append(w.unsaved, saved{class, at, record{User: req.User, Team: req.Team, GPUs: int(req.GPUs),
		Duration: req.Requested, Situation: est.Situation, Wait: wait, Started: started}})
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
	if alone := est.Situation.Alone; alone > 0 && !est.MayNotStart() {
		// Not enough of the pool is free for it now: it waits at least until the running
		// leases free enough GPUs, as the predictor's own simulation of them says, and never
		// less than a minute, however often requests started at once before.
		est.Median = max(est.Median, alone, time.Minute)
		est.P90 = max(est.P90, est.Median)
	}
	if req.Bounded {
		// Where it can be placed is known: it starts by then at the latest.
		est.Median, est.P90 = min(est.Median, req.AtMost), min(est.P90, max(req.AtMost, predict.MinBound))
	}
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
		wait := max(0, start.Sub(queuedAt))
		p.Observe(predict.Observation{Request: req, Estimate: est, Wait: wait, Started: true})
		w.mu.Lock()
		w.keep(l.Class, start, est, req, wait, true)
		w.mu.Unlock()
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
		req, wait := request(l.Class, l.User, l.Team, l.GPUs, l.Duration), max(0, l.EndedAt.Sub(queuedAt))
		p.Observe(predict.Observation{Request: req, Estimate: est, Wait: wait, Started: false})
		w.mu.Lock()
		w.keep(l.Class, l.EndedAt, est, req, wait, false)
		w.mu.Unlock()
	}
}
