package predict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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
			if e.P90 < max(e.Median, MinBound) {
				t.Errorf("P90 %v below median %v or a minute", e.P90, e.Median)
			}
		})
	}
}

// A short history says little about a situation unlike any in it: until it holds as many
// outcomes as a prediction rests on, the simulation decides. A few immediate starts on an empty
// pool do not make a full pool's wait zero.
func TestShortHistoryTrustsTheSimulation(t *testing.T) {
	p := New(Config{})
	req := Request{User: "u", GPUs: 1, Requested: time.Hour}
	empty := State{Now: t0, Capacity: 1}
	for range neighbourCount - 1 {
		p.Observe(Observation{Request: req, Estimate: p.Predict(req, empty), Started: true})
	}
	full := State{Now: t0, Capacity: 1, Running: []Lease{lease("a", 1, 50*time.Minute, time.Hour)}}
	if e := p.Predict(req, full); e.Median != 10*time.Minute || e.Basis != 0 {
		t.Fatalf("median %v (basis %d), want the simulated 10m", e.Median, e.Basis)
	}
	p.Observe(Observation{Request: req, Estimate: p.Predict(req, empty), Started: true})
	if e := p.Predict(req, full); e.Basis == 0 {
		t.Fatalf("with %d outcomes the history is still unused", neighbourCount)
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
	// Its bound is the shortest one given: a minute.
	if e := p.Predict(req, empty); e.Median != 0 || e.P90 != MinBound {
		t.Fatalf("empty pool: median = %v, P90 = %v; want 0 and %v", e.Median, e.P90, MinBound)
	}
}

func TestBoundAdaptsToMisses(t *testing.T) {
	p := New(Config{})
	st := State{Now: t0, Capacity: 1, Running: []Lease{lease("a", 1, 0, time.Hour)}}
	req := Request{GPUs: 1, Requested: time.Hour}
	for i := range 100 {
		p.Observe(Observation{Request: req, Estimate: p.Predict(req, st), Wait: time.Duration(30+i) * time.Minute, Started: true})
	}
	before := p.Predict(req, st).P90
	for range 20 { // everything now waits past its bound
		e := p.Predict(req, st)
		p.Observe(Observation{Request: req, Estimate: e, Wait: e.P90 + time.Hour, Started: true})
	}
	if after := p.Predict(req, st).P90; after <= before {
		t.Fatalf("P90 after misses %v, want above %v", after, before)
	}
	// A request that left the queue is right-censored: past its bound it is a miss, within it
	// neither hit nor miss.
	e := p.Predict(req, st)
	th := p.theta
	p.Observe(Observation{Request: req, Estimate: e, Wait: time.Duration(e.bounds[boundAsWas]+60) * time.Second})
	if p.theta[boundAsWas] <= th[boundAsWas] {
		t.Fatalf("a departure past its bound did not count as a miss: %v -> %v", th, p.theta)
	}
	e = p.Predict(req, st)
	th = p.theta
	p.Observe(Observation{Request: req, Estimate: e, Wait: time.Second})
	if p.theta != th {
		t.Fatalf("a departure within its bounds changed the prices: %v -> %v", th, p.theta)
	}
	// An outcome remembered from before a restart teaches the history, not the bound's price.
	th, n := p.theta, len(p.nb.xs)
	p.Remember(Observation{Request: req, Estimate: Estimate{P90: time.Minute}, Wait: time.Hour, Started: true})
	if p.theta != th || len(p.nb.xs) != n+1 {
		t.Fatalf("Remember: price %v -> %v, history %d -> %d; want the price kept and one more outcome", th, p.theta, n, len(p.nb.xs))
	}
}

// When requests keep waiting past bounds that already cover every similar request, the bound
// grows past the longest of their waits, by e^thetaGrowth at most.
func TestBoundGrowsPastHistory(t *testing.T) {
	p := New(Config{})
	st := State{Now: t0, Capacity: 1, Running: []Lease{lease("a", 1, 0, time.Hour)}}
	req := Request{GPUs: 1, Requested: time.Hour}
	for range 40 {
		p.Observe(Observation{Request: req, Estimate: p.Predict(req, st), Wait: time.Hour, Started: true})
	}
	if e := p.Predict(req, st); e.P90 != time.Hour {
		t.Fatalf("P90 %v, want the one wait seen, 1h", e.P90)
	}
	for range 1000 { // misses seen in the queue, without new waits in the history
		for w := range nBounds {
			p.coverage(w, true)
		}
	}
	want := time.Duration(float64(time.Hour) * math.Exp(thetaGrowth)).Round(time.Second)
	if e := p.Predict(req, st); e.P90 != want {
		t.Fatalf("P90 after many misses %v, want %v (e^%d × 1h)", e.P90, want, thetaGrowth)
	}
}

// Requests like this one are mostly still waiting, long past the waits of those that started:
// no finite bound is worth giving, and the estimate says so.
func TestMayNotStart(t *testing.T) {
	p := New(Config{})
	st := State{Now: t0, Capacity: 4, Running: []Lease{lease("a", 4, 0, time.Hour)}}
	req := Request{User: "u", GPUs: 1, Requested: time.Hour}
	var queued []Pending
	for i := range 64 {
		e := p.Predict(req, st)
		if i%2 == 0 {
			p.Observe(Observation{Request: req, Estimate: e, Wait: 2 * time.Minute, Started: true})
		} else {
			queued = append(queued, Pending{User: "u", GPUs: 1, Requested: time.Hour, Submit: t0.Add(-30 * 24 * time.Hour), Estimate: e})
		}
	}
	e := p.Predict(req, State{Now: t0, Capacity: 4, Running: st.Running, Queue: queued})
	if !e.MayNotStart() || e.P90 != Unbounded {
		t.Fatalf("P90 = %v, want Unbounded when half of similar requests have waited a month", e.P90)
	}
	if e.StartShare < 0.3 || e.StartShare > 0.7 {
		t.Errorf("StartShare = %v, want about one half", e.StartShare)
	}
	if e.Horizon != 2*time.Minute {
		t.Errorf("Horizon %v; want the longest wait seen (2m)", e.Horizon)
	}
	// Where every similar request started, the bound is finite again.
	other := Request{User: "v", GPUs: 4, Requested: 10 * time.Hour}
	for range 64 {
		p.Observe(Observation{Request: other, Estimate: p.Predict(other, st), Wait: time.Hour, Started: true})
	}
	if e := p.Predict(other, st); e.MayNotStart() || e.P90 < time.Hour {
		t.Fatalf("P90 = %v, want a finite bound of at least the usual hour", e.P90)
	}
}

// Requests still waiting in the queue count as censored observations: when the similar
// requests ahead have waited far longer than the past waits, the bound says so.
func TestWaitingRequestsWidenTheBound(t *testing.T) {
	p := New(Config{})
	st := State{Now: t0, Capacity: 4, Running: []Lease{lease("a", 4, 0, time.Hour)}}
	req := Request{User: "u", GPUs: 1, Requested: time.Hour}
	var queued []Pending
	for i := range 40 {
		e := p.Predict(req, st)
		p.Observe(Observation{Request: req, Estimate: e, Wait: time.Duration(10+i%5) * time.Minute, Started: true})
		if i >= 32 { // the last eight never started: they are still waiting, for five hours now
			queued = append(queued, Pending{User: "u", GPUs: 1, Requested: time.Hour, Submit: t0.Add(-5 * time.Hour), Estimate: e})
		}
	}
	alone := p.Predict(req, st)
	withQueue := p.Predict(req, State{Now: t0, Capacity: 4, Running: st.Running, Queue: queued})
	if withQueue.StartShare >= alone.StartShare {
		t.Errorf("StartShare %v with eight similar requests waiting for hours, want below %v", withQueue.StartShare, alone.StartShare)
	}
	if withQueue.P90 != Unbounded && withQueue.P90 <= alone.P90 {
		t.Errorf("P90 %v with the queue, want above %v (or Unbounded)", withQueue.P90, alone.P90)
	}
}

// A queued request seen past its bound counts as a miss then, once, and not again when it starts.
func TestOverdueCountsOnce(t *testing.T) {
	p := New(Config{})
	st := State{Now: t0, Capacity: 4, Running: []Lease{lease("a", 4, 0, time.Hour)}}
	req := Request{User: "u", GPUs: 1, Requested: time.Hour}
	for range 40 {
		p.Observe(Observation{Request: req, Estimate: p.Predict(req, st), Wait: 10 * time.Minute, Started: true})
	}
	e := p.Predict(req, st)
	if e.MayNotStart() || e.P90 > 24*time.Hour {
		t.Fatalf("P90 = %v", e.P90)
	}
	var longest float32
	for _, b := range e.bounds {
		longest = max(longest, b)
	}
	queued := []Pending{{User: "u", GPUs: 1, Requested: time.Hour, Submit: t0, Estimate: e}}
	p.Predict(req, State{Now: t0.Add(time.Second), Capacity: 4, Queue: queued}) // seen waiting
	th, level := p.theta, p.level
	late := State{Now: t0.Add(time.Duration(longest)*time.Second + time.Hour), Capacity: 4, Queue: queued}
	p.Predict(req, late)
	p.Predict(req, late)
	for w := range nBounds {
		if w == boundQuantile {
			if want := level + levelRate*DefaultCoverage; math.Abs(p.level-want) > 1e-9 {
				t.Fatalf("quantile level %v after seeing an overdue request twice, want %v (one miss)", p.level, want)
			}
			continue
		}
		if want := th[w] + aciRate*DefaultCoverage; math.Abs(p.theta[w]-want) > 1e-9 {
			t.Fatalf("way %d: theta %v after seeing an overdue request twice, want %v (one miss)", w, p.theta[w], want)
		}
	}
	th, level = p.theta, p.level
	p.Observe(Observation{Request: req, Estimate: e, Wait: time.Duration(longest)*time.Second + time.Hour, Started: true})
	if p.theta != th || p.level != level {
		t.Fatalf("the overdue request counted again when it started: %v -> %v, level %v -> %v", th, p.theta, level, p.level)
	}
}

// The start curve: the empirical distribution without departures or waiting requests;
// departures are a competing event (the start share stops short of 1 and the share gone grows);
// a still-waiting request shares its weight with those still at risk.
func TestStartCurve(t *testing.T) {
	for _, tc := range []struct {
		name string
		obs  []outcome
		want []step
	}{
		{"starts only", []outcome{{0, 1, started}, {10, 1, started}, {10, 1, started}, {30, 1, started}},
			[]step{{0, 0.25, 0}, {10, 0.75, 0}, {30, 1, 0}}},
		{"a departure", []outcome{{5, 1, started}, {7, 1, left}, {9, 1, started}, {12, 1, started}},
			[]step{{5, 0.25, 0}, {7, 0.25, 0.25}, {9, 0.5, 0.25}, {12, 0.75, 0.25}}},
		{"a waiting request", []outcome{{5, 1, started}, {6, 1, waiting}, {8, 1, started}, {9, 1, started}},
			// after 6 the remaining 3/4 is shared by the two at risk: 3/8 each
			[]step{{5, 0.25, 0}, {8, 0.625, 0}, {9, 1, 0}}},
	} {
		got := startCurve(tc.obs, nil)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, got, tc.want)
		}
		for i := range got {
			if got[i].t != tc.want[i].t || math.Abs(got[i].cif-tc.want[i].cif) > 1e-12 || math.Abs(got[i].gone-tc.want[i].gone) > 1e-12 {
				t.Fatalf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

func TestBestBound(t *testing.T) {
	curve := []step{{0, 0.6, 0}, {600, 0.8, 0}, {3600, 0.9, 0}, {86400, 1, 0}}
	for _, tc := range []struct {
		lambda, want float64
	}{
		{1, 0},         // a minute's cost is more than any gain
		{0.05, 3600},   // the hour is worth its length, the day is not
		{0.001, 86400}, // nearly free: cover everything
	} {
		if got, _ := bestBound(curve, tc.lambda, DefaultCoverage); got != tc.want {
			t.Errorf("bestBound(λ=%v) = %v, want %v", tc.lambda, got, tc.want)
		}
	}
	// Requests that leave the queue within a bound are left out of the count: worth nearly a
	// hit each, so a bound past the usual departures is worth its length.
	leaving := []step{{0, 0.5, 0}, {600, 0.5, 0.4}, {3600, 0.55, 0.4}}
	if got, _ := bestBound(leaving, 0.05, DefaultCoverage); got != 600 {
		t.Errorf("bestBound with departures = %v, want 600", got)
	}
	if got, _ := bestBound(leaving, 0.05, 0); got != 0 {
		t.Errorf("bestBound with departures worth nothing = %v, want 0", got)
	}
}

// Predictions from tracked leases equal those from the same leases in State.Running, as the
// clock moves on and leases start and end; after the learned run times change noticeably too.
func TestTrackedLeases(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tracked, given := New(Config{}), New(Config{})
	learn := func(n int) {
		for range n {
			user := fmt.Sprintf("u%d", rng.IntN(7))
			req := time.Duration(1+rng.IntN(10)) * time.Hour
			ran := time.Duration(rng.Int64N(int64(req)))
			for _, p := range []*Predictor{tracked, given} {
				p.ObserveRun(Request{User: user, Requested: req}, ran)
				p.ObserveRun(Request{User: user}, ran) // and a lease without a requested time
			}
		}
	}
	learn(200)
	var running []Lease
	var ids []string
	for i := range 600 {
		if i == 300 {
			learn(runWindow) // every window replaced: every expected end is stale
		}
		req := time.Duration(1+rng.IntN(10)) * time.Hour
		now := t0.Add(time.Duration(i) * time.Minute)
		l := Lease{User: fmt.Sprintf("u%d", rng.IntN(9)), GPUs: float64(1 + rng.IntN(4)), Start: now.Add(-time.Duration(rng.Int64N(int64(req)))), Requested: req}
		if i%3 == 0 {
			l.Requested = 0
		}
		running, ids = append(running, l), append(ids, fmt.Sprint(i))
		tracked.Track(ids[len(ids)-1], l)
		if len(running) > 25 { // one ends
			k := rng.IntN(len(running))
			tracked.Untrack(ids[k])
			running, ids = slices.Delete(running, k, k+1), slices.Delete(ids, k, k+1)
		}
		r := Request{User: "u1", GPUs: 3, Requested: time.Hour}
		a := tracked.Predict(r, State{Now: now, Capacity: 60})
		b := given.Predict(r, State{Now: now, Capacity: 60, Running: running})
		if d := a.Situation.Queued - b.Situation.Queued; d < -time.Second || d > time.Second || a.Situation.Alone != b.Situation.Alone && d != 0 {
			t.Fatalf("step %d: tracked %+v, given %+v", i, a.Situation, b.Situation)
		}
	}
	tracked.Untrack("no such lease") // ignored
	if len(tracked.run.list) != len(running) {
		t.Fatalf("%d tracked, %d running", len(tracked.run.list), len(running))
	}
}

func TestEarliest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		e := make([]endEvent, rng.IntN(300))
		total := 0.0
		for i := range e {
			e[i] = endEvent{t: float64(rng.IntN(50)), gpus: float64(rng.IntN(3))}
			total += e[i].gpus
		}
		want := rng.Float64() * total * 1.2
		m := earliest(e, want)
		sum, last := 0.0, math.Inf(-1)
		for _, x := range e[:m] {
			sum += x.gpus
			last = max(last, x.t)
		}
		for _, x := range e[m:] {
			if x.t < last {
				t.Fatalf("an end at %v left out while one at %v is in", x.t, last)
			}
		}
		if sum < want && m < len(e) {
			t.Fatalf("the first %d ends free %v GPUs, want %v", m, sum, want)
		}
	}
}

func TestResidual(t *testing.T) {
	s := []float64{1, 2, 3, 4, 10}
	for _, tc := range []struct {
		x, left, next float64
		ok            bool
	}{
		{0, 3, 1, true},     // all five: median 3, holds until x passes 1
		{2.5, 1.5, 3, true}, // 3, 4, 10: median 4
		{3, 1, 4, true},     // 4, 10: the lower middle, 4
		{4, 6, 10, true},
		{10, 0, 0, false},
	} {
		mid, next, ok := residual(s, tc.x)
		if ok != tc.ok || ok && (mid-tc.x != tc.left || next != tc.next) {
			t.Errorf("residual(%v) = %v, %v, %v; want left %v, next %v, %v", tc.x, mid, next, ok, tc.left, tc.next, tc.ok)
		}
	}
}

// A request still waiting past its finite bounds counts as a miss for those, but not for a way
// that answered "may not start": that answer has not run out.
func TestOverdueLeavesUnboundedAlone(t *testing.T) {
	p := New(Config{})
	e := Estimate{valid: true, seq: 1}
	e.bounds = [nBounds]float32{float32(math.Inf(1)), 60, 60, 60}
	p.watch(&e, t0.UnixNano())
	th := p.theta
	p.overdue(t0.Add(time.Hour).UnixNano())
	if p.theta[boundAsWas] != th[boundAsWas] {
		t.Errorf("Unbounded way: theta %v -> %v, want it unchanged", th[boundAsWas], p.theta[boundAsWas])
	}
	if want := th[boundScaled] + aciRate*DefaultCoverage; math.Abs(p.theta[boundScaled]-want) > 1e-9 {
		t.Errorf("way with a one-minute bound: theta %v, want %v (one miss)", p.theta[boundScaled], want)
	}
}

// A user's backlog drains at the user's pace as it stands now: sixteen starts in a clump two
// hours ago, and none since, is one start every 7.5 minutes, not one a second.
func TestUserDrainCountsTheTimeSinceTheLastStarts(t *testing.T) {
	p := New(Config{})
	req := Request{User: "u", GPUs: 1, Requested: time.Hour}
	for i := range paceStarts {
		e := p.Predict(req, State{Now: t0, Capacity: 64})
		p.Observe(Observation{Request: req, Estimate: e, Wait: time.Duration(i) * time.Second, Started: true})
	}
	now := t0.Add(2 * time.Hour)
	queue := make([]Pending, 32)
	for i := range queue {
		queue[i] = Pending{User: "u", GPUs: 1, Submit: now.Add(-time.Minute)}
	}
	e := p.Predict(req, State{Now: now, Capacity: 64, Queue: queue})
	if want := 32 * 2 * time.Hour / paceStarts; e.Situation.UserDrain < want-time.Minute || e.Situation.UserDrain > want+time.Minute {
		t.Fatalf("user drain %v for 32 of the user's requests ahead, want about %v", e.Situation.UserDrain, want)
	}
}
