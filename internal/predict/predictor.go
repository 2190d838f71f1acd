package predict

import (
	"math"
	"sync"
	"time"
)

// Request is what a user asks for: the wait is predicted for it.
type Request struct {
	Queue     string        // class, partition or queue; a calibration feature
	User      string        // requesting user; "" when unknown
	Team      string        // requesting team; "" when unknown
	GPUs      float64       // GPUs (or processors) asked for
	Requested time.Duration // requested duration (lease length, time limit); 0 when unknown
}

// Lease is a running lease or job in the pool the request would run in.
type Lease struct {
	User      string
	Team      string
	Queue     string
	GPUs      float64
	Start     time.Time
	Requested time.Duration // 0 when unknown; expected end = Start + Requested scaled by a learned ratio
}

// Pending is a request waiting ahead in the queue.
type Pending struct {
	User      string
	Team      string
	Queue     string
	GPUs      float64
	Submit    time.Time
	Requested time.Duration
}

// State is the live state of the pool at the moment of the prediction.
type State struct {
	Now      time.Time
	Capacity float64   // GPUs in the pool; 0: use Config.Capacity, else the most ever seen in use
	Running  []Lease   // every running lease; Predict does not keep the slice
	Queue    []Pending // requests ahead of this one, in the order the scheduler serves them
}

// Estimate is a predicted wait. Keep it with the request and hand it back to Observe when the
// request starts (or leaves the queue): besides the prediction it holds the Situation the
// prediction was made in, which is what the predictor learns from.
type Estimate struct {
	Median    time.Duration // point prediction: about half of similar requests waited less
	P90       time.Duration // upper bound: about nine requests in ten start within it
	Basis     int           // observed waits behind Median and P90; 0 means no history yet
	Situation Situation
}

// Situation is what the predictor knew when it made an estimate: the simulated starts and
// what the queue and the recent waits looked like.
type Situation struct {
	Alone      time.Duration // start on the first GPUs that free up, ignoring the queue
	Backfill   time.Duration // start in the first hole of the queue's schedule that fits its run time
	Queued     time.Duration // start behind every request ahead, first come first served
	UserWait   time.Duration // median of the user's recent waits (everyone's for a new user)
	LastWait   time.Duration // the user's latest wait (everyone's for a new user)
	RecentWait time.Duration // median of everyone's recent waits
	QueueAge   time.Duration // how long the oldest request ahead has waited so far
	Ahead      int           // requests ahead
	UserAhead  int           // the same user's requests ahead
}

// Observation reports what happened to a request that Predict estimated.
type Observation struct {
	Request  Request
	Estimate Estimate      // what Predict returned when the request was submitted
	Wait     time.Duration // submit to start, or, when !Started, how long it waited before leaving the queue
	Started  bool
}

// Config tunes a Predictor; the zero value works.
type Config struct {
	// Capacity is the pool's size in GPUs when State.Capacity is 0. When both are 0 the
	// predictor uses the largest usage it has seen, never less than the request.
	Capacity float64
	// Coverage is the share of requests that should start within P90 (default 0.9).
	Coverage float64
}

// Default tuning. None of these depends on a particular cluster: the situation is compared
// on a log scale and the history is the cluster's own.
const (
	DefaultCoverage = 0.9
	aciRate         = 0.005 // step of the online coverage correction
	userWindow      = 10    // recent waits remembered per user
	allWindow       = 100   // recent waits remembered for everyone
)

// Predictor predicts queue waits from the live state of a pool and what it has learned online.
// It is safe for concurrent use. Use one Predictor per pool of GPUs (per class).
//
// Call Predict for every request when it is submitted (or shown a quote), keep the Estimate,
// call Observe when the request starts or leaves the queue, and ObserveRun when a lease ends.
// The predictor simulates the pool forward (running leases end at their learned expected end,
// the queue ahead starts in order) and maps the simulated start to the waits that requests in
// the same situation actually had; an adaptive correction keeps the 90 % bound's coverage on
// target as the cluster changes.
type Predictor struct {
	mu      sync.Mutex
	cfg     Config
	seenCap float64
	rt      runtimes
	nb      neighbours
	sc      simScratch
	users   map[string]*userWaits
	all     userWaits
	// alpha is the upper-tail level of the bound, corrected online (adaptive conformal
	// inference): every miss lowers it, every hit raises it a little, so the long-run share of
	// waits within the bound tracks the target. Below 0 the bound grows past the neighbours' largest.
	alpha float64
}

type userWaits struct {
	w    *window
	last float64
}

// New returns a Predictor with no history.
func New(cfg Config) *Predictor {
	if cfg.Coverage <= 0 || cfg.Coverage >= 1 {
		cfg.Coverage = DefaultCoverage
	}
	p := &Predictor{cfg: cfg, users: map[string]*userWaits{}, alpha: 1 - cfg.Coverage}
	p.rt.init()
	p.nb.init()
	p.all.w = newWindow(allWindow)
	return p
}

// Predict estimates how long req will wait in the pool described by st.
func (p *Predictor) Predict(req Request, st State) Estimate {
	p.mu.Lock()
	defer p.mu.Unlock()
	sim := p.simulate(req, st)
	est := Estimate{Situation: Situation{
		Alone: secs(sim.alone), Backfill: secs(sim.backfill), Queued: secs(sim.queued),
		RecentWait: secs(quantile(p.all.w.view(), 0.5)), Ahead: len(st.Queue),
	}}
	uw := &p.all
	if u := p.users[req.User]; u != nil {
		uw = u
	}
	est.Situation.UserWait, est.Situation.LastWait = secs(quantile(uw.w.view(), 0.5)), secs(uw.last)
	for i := range st.Queue {
		q := &st.Queue[i]
		if i == 0 || st.Now.Sub(q.Submit) > est.Situation.QueueAge {
			est.Situation.QueueAge = max(st.Now.Sub(q.Submit), 0)
		}
		if q.User == req.User {
			est.Situation.UserAhead++
		}
	}

	vals := p.nb.query(features(&est.Situation, &req), req.Queue)
	if len(vals) == 0 { // no history: trust the simulation
		est.Median, est.P90 = secs(sim.backfill), secs(2*sim.queued)
		return est
	}
	med := quantile(vals, 0.5)
	var hi float64
	if p.alpha >= 0 {
		hi = quantile(vals, 1-p.alpha)
	} else {
		hi = vals[len(vals)-1] * (1 - 4*p.alpha)
	}
	est.Median, est.P90, est.Basis = secs(med), secs(max(hi, med)), len(vals)
	return est
}

// Observe feeds back what happened to an estimated request: its wait when it started, or how
// long it had waited when it left the queue without starting (which teaches the bound only).
// Report each request once.
func (p *Predictor) Observe(o Observation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := o.Wait.Seconds()
	miss := w > o.Estimate.P90.Seconds()
	if !o.Started && !miss {
		return // left before its bound: neither a hit nor a miss
	}
	p.coverage(miss)
	if !o.Started {
		return
	}
	p.nb.add(features(&o.Estimate.Situation, &o.Request), o.Request.Queue, w)
	u := p.users[o.Request.User]
	if u == nil {
		u = &userWaits{w: newWindow(userWindow)}
		p.users[o.Request.User] = u
	}
	u.w.add(w)
	u.last = w
	p.all.w.add(w)
	p.all.last = w
}

func (p *Predictor) coverage(miss bool) {
	err := 0.0
	if miss {
		err = 1
	}
	p.alpha += aciRate * (1 - p.cfg.Coverage - err)
	p.alpha = min(max(p.alpha, -1), 0.5)
}

// ObserveRun feeds back how long a finished lease ran, which teaches the expected end of
// running leases (ran / requested per user, or the run-time distribution when requests carry
// no duration).
func (p *Predictor) ObserveRun(req Request, ran time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rt.observe(req.User, req.Queue, req.Requested.Seconds(), ran.Seconds())
}

func secs(s float64) time.Duration {
	if s <= 0 || math.IsNaN(s) {
		return 0
	}
	if s > 1e9 {
		s = 1e9
	}
	return time.Duration(s * float64(time.Second)).Round(time.Second)
}
