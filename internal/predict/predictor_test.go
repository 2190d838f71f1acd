package predict

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// lease is a running lease started ago, with a requested duration.
func lease(user string, gpus float64, ago, requested time.Duration) Lease {
	return Lease{User: user, GPUs: gpus, Start: t0.Add(-ago), Requested: requested}
}

func TestPredictWithoutHistory(t *testing.T) {
	full := []Lease{ // 4 GPUs, all busy; expiries at 10, 20, 30 and 40 minutes
		lease("a", 1, 50*time.Minute, time.Hour),
		lease("b", 1, 40*time.Minute, time.Hour),
		lease("c", 1, 30*time.Minute, time.Hour),
		lease("d", 1, 20*time.Minute, time.Hour),
	}
	for _, tc := range []struct {
		name                    string
		req                     Request
		st                      State
		alone, backfill, queued time.Duration
	}{
		{
			name: "empty cluster starts at once",
			req:  Request{GPUs: 2, Requested: time.Hour},
			st:   State{Now: t0, Capacity: 8},
		},
		{
			name: "free GPUs start at once",
			req:  Request{GPUs: 2, Requested: time.Hour},
			st:   State{Now: t0, Capacity: 8, Running: full},
		},
		{
			name:  "full cluster waits for the next expiry",
			req:   Request{GPUs: 1, Requested: time.Hour},
			st:    State{Now: t0, Capacity: 4, Running: full},
			alone: 10 * time.Minute, backfill: 10 * time.Minute, queued: 10 * time.Minute,
		},
		{
			name:  "two GPUs wait for the second expiry",
			req:   Request{GPUs: 2, Requested: time.Hour},
			st:    State{Now: t0, Capacity: 4, Running: full},
			alone: 20 * time.Minute, backfill: 20 * time.Minute, queued: 20 * time.Minute,
		},
		{
			name: "the request ahead takes the first expiry",
			req:  Request{GPUs: 1, Requested: time.Hour},
			st: State{Now: t0, Capacity: 4, Running: full,
				Queue: []Pending{{User: "e", GPUs: 1, Submit: t0.Add(-time.Minute), Requested: time.Hour}}},
			alone: 10 * time.Minute, backfill: 20 * time.Minute, queued: 20 * time.Minute,
		},
		{
			name: "a short request backfills before a wide one ahead",
			req:  Request{GPUs: 1, Requested: 30 * time.Minute},
			st: State{Now: t0, Capacity: 4,
				Running: []Lease{lease("a", 2, 0, time.Hour)},
				Queue:   []Pending{{User: "w", GPUs: 4, Submit: t0, Requested: 2 * time.Hour}}},
			alone: 0, backfill: 0, queued: 3 * time.Hour,
		},
		{
			name: "a long request does not fit the hole",
			req:  Request{GPUs: 1, Requested: 2 * time.Hour},
			st: State{Now: t0, Capacity: 4,
				Running: []Lease{lease("a", 2, 0, time.Hour)},
				Queue:   []Pending{{User: "w", GPUs: 4, Submit: t0, Requested: 2 * time.Hour}}},
			alone: 0, backfill: 3 * time.Hour, queued: 3 * time.Hour,
		},
		{
			name:  "unknown capacity is the most seen in use",
			req:   Request{GPUs: 1, Requested: time.Hour},
			st:    State{Now: t0, Running: full},
			alone: 10 * time.Minute, backfill: 10 * time.Minute, queued: 10 * time.Minute,
		},
		{
			name:  "a request larger than the pool waits for all of it",
			req:   Request{GPUs: 9, Requested: time.Hour},
			st:    State{Now: t0, Capacity: 4, Running: full},
			alone: 40 * time.Minute, backfill: 40 * time.Minute, queued: 40 * time.Minute,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := New(Config{}).Predict(tc.req, tc.st)
			s := e.Situation
			if s.Alone != tc.alone || s.Backfill != tc.backfill || s.Queued != tc.queued {
				t.Errorf("alone, backfill, queued = %v, %v, %v; want %v, %v, %v", s.Alone, s.Backfill, s.Queued, tc.alone, tc.backfill, tc.queued)
			}
			// With no history the prediction is the simulated backfill start.
			if e.Median != tc.backfill || e.Basis != 0 {
				t.Errorf("median = %v (basis %d), want %v from the simulation", e.Median, e.Basis, tc.backfill)
			}
			if e.P90 < e.Median {
				t.Errorf("P90 %v below median %v", e.P90, e.Median)
			}
		})
	}
}

func TestObserveRunLearnsEarlyRelease(t *testing.T) {
	p := New(Config{})
	st := State{Now: t0, Capacity: 1, Running: []Lease{lease("u", 1, 0, 2*time.Hour)}}
	req := Request{User: "v", GPUs: 1, Requested: time.Hour}
	if got := p.Predict(req, st).Situation.Alone; got != 2*time.Hour {
		t.Fatalf("before learning: alone = %v, want the full 2h", got)
	}
	for range 8 { // u releases after half the requested time
		p.ObserveRun(Request{User: "u", Requested: 2 * time.Hour}, time.Hour)
	}
	if got := p.Predict(req, st).Situation.Alone; got != time.Hour {
		t.Fatalf("after learning: alone = %v, want 1h", got)
	}
	// A lease already past its usual end is expected to end before its limit, not in the past.
	st.Running[0].Start = t0.Add(-90 * time.Minute)
	if got := p.Predict(req, st).Situation.Alone; got <= 0 || got > 30*time.Minute {
		t.Fatalf("overdue lease: alone = %v, want within its last 30 minutes", got)
	}
}

func TestObserveRunWithoutRequestedTime(t *testing.T) {
	p := New(Config{})
	for _, ran := range []time.Duration{10, 20, 30, 40, 50} {
		p.ObserveRun(Request{}, ran*time.Minute)
	}
	st := State{Now: t0, Capacity: 1, Running: []Lease{{GPUs: 1, Start: t0.Add(-25 * time.Minute)}}}
	// Past leases that ran more than 25 minutes ran 30, 40, 50: the median is 40, 15 to go.
	if got := p.Predict(Request{GPUs: 1}, st).Situation.Alone; got != 15*time.Minute {
		t.Fatalf("alone = %v, want 15m", got)
	}
}

func TestObserveLearnsWaits(t *testing.T) {
	p := New(Config{})
	st := State{Now: t0, Capacity: 4, Running: []Lease{lease("a", 4, 0, time.Hour)}}
	req := Request{User: "u", GPUs: 1, Requested: time.Hour}
	// This scheduler always starts such a request 5 minutes after the first expiry.
	for range 40 {
		e := p.Predict(req, st)
		p.Observe(Observation{Request: req, Estimate: e, Wait: 65 * time.Minute, Started: true})
	}
	e := p.Predict(req, st)
	if e.Median != 65*time.Minute || e.Basis == 0 {
		t.Fatalf("median = %v (basis %d), want the learned 65m", e.Median, e.Basis)
	}
	if e.P90 < e.Median {
		t.Fatalf("P90 %v < median %v", e.P90, e.Median)
	}
	// An empty pool stays an immediate start: the nearest situations are the zero-wait ones.
	empty := State{Now: t0, Capacity: 4}
	for range 40 {
		e := p.Predict(req, empty)
		p.Observe(Observation{Request: req, Estimate: e, Started: true})
	}
	if e := p.Predict(req, empty); e.Median != 0 {
		t.Fatalf("empty pool: median = %v, want 0", e.Median)
	}
}

func TestBoundAdaptsToMisses(t *testing.T) {
	p := New(Config{})
	st := State{Now: t0, Capacity: 1, Running: []Lease{lease("a", 1, 0, time.Hour)}}
	req := Request{GPUs: 1, Requested: time.Hour}
	waits := []time.Duration{}
	for i := range 100 {
		waits = append(waits, time.Duration(30+i)*time.Minute)
	}
	for _, w := range waits {
		p.Observe(Observation{Request: req, Estimate: p.Predict(req, st), Wait: w, Started: true})
	}
	before := p.Predict(req, st).P90
	for range 20 { // everything now runs past the bound
		e := p.Predict(req, st)
		p.Observe(Observation{Request: req, Estimate: e, Wait: e.P90 + time.Hour, Started: false})
	}
	if after := p.Predict(req, st).P90; after <= before {
		t.Fatalf("P90 after misses %v, want above %v", after, before)
	}
	// A request that left the queue before its bound teaches nothing.
	a := p.alpha
	p.Observe(Observation{Request: req, Estimate: Estimate{P90: time.Hour}, Wait: time.Minute})
	if p.alpha != a {
		t.Fatalf("withdrawal before the bound changed the level: %v -> %v", a, p.alpha)
	}
}

func TestResidualMedian(t *testing.T) {
	s := []float64{1, 2, 3, 4, 10}
	for _, tc := range []struct {
		x, want float64
		ok      bool
	}{
		{0, 3, true},     // all five: median 3
		{2.5, 1.5, true}, // 3, 4, 10: median 4
		{3, 1, true},     // 4, 10: the lower middle, 4
		{4, 6, true},
		{10, 0, false},
	} {
		got, ok := residualMedian(s, tc.x)
		if got != tc.want || ok != tc.ok {
			t.Errorf("residualMedian(%v) = %v, %v; want %v, %v", tc.x, got, ok, tc.want, tc.ok)
		}
	}
}
