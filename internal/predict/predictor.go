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
	// Estimate is what Predict returned when the request was submitted, if it was. The request
	// then counts in the bounds of similar requests as one that has waited at least Now - Submit
	// so far (a censored observation), and once it is seen past its bound it counts as a miss
	// at once, without waiting for it to start. The zero value leaves it out.
	Estimate Estimate
}

// State is the live state of the pool at the moment of the prediction.
type State struct {
	Now      time.Time
	Capacity float64   // GPUs in the pool; 0: use Config.Capacity, else the most ever seen in use
	Running  []Lease   // every running lease; nil: the leases given to Track. Predict does not keep the slice
	Queue    []Pending // requests ahead of this one, in the order the scheduler serves them
}

// Estimate is a predicted wait. Keep it with the request and hand it back to Observe when the
// request starts (or leaves the queue), and in Pending while it waits: besides the prediction it
// holds the Situation the prediction was made in, which is what the predictor learns from.
type Estimate struct {
	// Median is the point prediction: half of the similar requests that started waited less.
	Median time.Duration
	// P90 is the upper bound: nine requests in ten start within their bound. It is at least
	// Median and at least MinBound; a request whose wait is predictable gets a bound that
	// covers nearly every similar request, one whose wait is spread widely a shorter one that
	// covers fewer, so that the bounds are as tight as they can be for nine in ten overall.
	//
	// P90 is Unbounded when too many similar requests never started (they left the queue
	// without starting, or are still waiting) for a finite bound to be worth giving: show it
	// as "may not start within Horizon".
	P90 time.Duration
	// Horizon is the longest wait the predictor has seen among the requests it remembers: the
	// span its history speaks for.
	Horizon time.Duration
	// StartShare is the estimated share of similar requests that start at all (1 when every
	// one did; 0 with no history).
	StartShare float64
	Basis      int // outcomes behind the bound; 0 means no history yet
	Situation  Situation

	x     [nFeatures]float32 // the situation as the neighbour search sees it
	valid bool               // made by Predict (so x and seq are set)
	seq   uint64             // which prediction it was
}

// Unbounded is Estimate.P90 for a request that may never start (see Estimate.P90).
const Unbounded time.Duration = math.MaxInt64

// MinBound is the shortest bound given: a minute. Below that the difference means nothing to
// the person waiting, and a bound of seconds for a request expected to start at once is missed
// by any scheduling hiccup; every miss spent there is one the bounds of requests that really
// wait cannot afford, since the online correction keeps the share of misses at one in ten.
const MinBound = time.Minute

// MayNotStart reports whether the bound is Unbounded.
func (e Estimate) MayNotStart() bool { return e.P90 == Unbounded }

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
// on a log scale, the history is the cluster's own and the bound's price is learned online.
const (
	DefaultCoverage = 0.9
	aciRate         = 0.05 // step of the online correction of the bound's price (ln λ)
	thetaStart      = 3    // initial price, as -ln λ (λ = 0.05)
	thetaMax        = 7    // past this (λ under 0.1 %) bounds grow beyond the neighbours' waits ...
	thetaGrowth     = 2    // ... by up to e² times
	maxMissed       = 1 << 16
	userWindow      = 10  // recent waits remembered per user
	allWindow       = 100 // recent waits remembered for everyone
)

// Predictor predicts queue waits from the live state of a pool and what it has learned online.
// It is safe for concurrent use. Use one Predictor per pool of GPUs (per class).
//
// Call Predict for every request when it is submitted (or shown a quote), keep the Estimate,
// call Observe when the request starts or leaves the queue, and ObserveRun when a lease ends;
// Track and Untrack the running leases to keep predictions cheap in large pools.
// The predictor simulates the pool forward (running leases end at their learned expected end,
// the queue ahead starts in order) and maps the simulated start to what happened to requests in
// the same situation: when they started, or that they left without starting, or that they are
// still waiting. An online correction keeps nine requests in ten within their bound as the
// cluster changes.
type Predictor struct {
	mu      sync.Mutex
	cfg     Config
	seenCap float64
	rt      runtimes
	nb      neighbours
	sc      simScratch
	run     trackedLeases
	pend    []pendingObs
	curve   []step
	users   map[string]*userWaits
	all     userWaits
	// theta is -ln λ, the (negated) price of a longer bound, corrected online like adaptive
	// conformal inference: every miss raises it by aciRate × Coverage, every hit lowers it by
	// aciRate × (1 - Coverage), so the long-run share of requests within their bound tracks
	// Coverage. Past thetaMax the bounds grow beyond the neighbours' waits.
	theta  float64
	seq    uint64              // predictions made
	missed map[uint64]struct{} // queued requests already counted as past their bound
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
	p := &Predictor{cfg: cfg, users: map[string]*userWaits{}, theta: thetaStart, missed: map[uint64]struct{}{}}
	p.rt.init()
	p.nb.init()
	p.sc.horizon = 3600
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
	pend := p.pend[:0]
	for i := range st.Queue {
		q := &st.Queue[i]
		age := max(st.Now.Sub(q.Submit), 0)
		if i == 0 || age > est.Situation.QueueAge {
			est.Situation.QueueAge = age
		}
		if q.User == req.User {
			est.Situation.UserAhead++
		}
		if q.Estimate.valid {
			pend = append(pend, pendingObs{x: &q.Estimate.x, queue: q.Queue, age: age.Seconds()})
			if age > q.Estimate.P90 {
				p.overdue(q.Estimate.seq)
			}
		}
	}
	p.seq++
	est.x, est.valid, est.seq = features(&est.Situation, &req), true, p.seq

	vals, obs := p.nb.query(est.x, req.Queue, pend)
	clear(pend)
	p.pend = pend[:0]
	// Until the history holds as many outcomes as a prediction rests on, the nearest situations
	// may be nothing like this one (a few immediate starts on an empty pool, say, against a
	// full one now): trust the simulation.
	if len(p.nb.xs) < neighbourCount || len(obs) == 0 {
		est.Median, est.P90 = secs(sim.backfill), max(secs(2*sim.queued), MinBound)
		return est
	}
	p.curve = incidence(obs, p.curve)
	est.Basis, est.StartShare = len(obs), reach(p.curve)
	if len(vals) > 0 {
		est.Median = secs(quantile(vals, 0.5))
	} else {
		est.Median = secs(sim.backfill) // no similar request started: the simulation is all there is
	}
	// The bound: the point of the neighbours' start curve that buys the most coverage for its
	// length at the current price λ; or Unbounded, which covers every request, even one that
	// never starts, and is priced as a bound as long as the longest wait in the history (a
	// minute at least): it wins when too many similar requests never started.
	lambda := math.Exp(-min(p.theta, thetaMax))
	longest := p.nb.longestWait()
	est.Horizon = secs(longest)
	hi, value := bestBound(p.curve, lambda)
	if 1-lambda*math.Log1p(max(longest, 60)/60) > value {
		est.P90 = Unbounded
		return est
	}
	if p.theta > thetaMax { // more coverage wanted than the neighbours give: grow past them
		hi *= math.Exp(p.theta - thetaMax)
	}
	est.P90 = max(secs(hi), est.Median, MinBound)
	return est
}

// Observe feeds back what happened to an estimated request: its wait when it started, or how
// long it had waited when it left the queue without starting. Report each request once.
func (p *Predictor) Observe(o Observation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	// A request that never starts is covered only by an Unbounded bound. One already seen in the
	// queue past its bound was counted then.
	if _, counted := p.missed[o.Estimate.seq]; counted && o.Estimate.valid {
		delete(p.missed, o.Estimate.seq)
	} else {
		p.coverage(o.Estimate.P90 != Unbounded && (!o.Started || o.Wait > o.Estimate.P90))
	}
	p.learn(o)
}

// Remember teaches the predictor an outcome it did not see itself, such as one kept from before
// a restart: like Observe, but the bound's online correction is left alone, since whether the
// request's bound held is not known. Of o.Estimate only the Situation is read.
func (p *Predictor) Remember(o Observation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o.Estimate.valid = false
	p.learn(o)
}

// learn adds o to the outcomes the predictor looks up, and a start to the recent waits.
func (p *Predictor) learn(o Observation) {
	w := o.Wait.Seconds()
	x := o.Estimate.x
	if !o.Estimate.valid {
		x = features(&o.Estimate.Situation, &o.Request)
	}
	p.nb.add(x, o.Request.Queue, w, !o.Started)
	if !o.Started {
		return
	}
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

// overdue counts a miss for the request estimated as seq, still queued past its bound, the first
// time it is seen so: the bound's correction need not wait for the request to start.
func (p *Predictor) overdue(seq uint64) {
	if _, ok := p.missed[seq]; ok {
		return
	}
	if len(p.missed) >= maxMissed { // requests never reported to Observe: forget the oldest
		oldest := seq
		for s := range p.missed {
			oldest = min(oldest, s)
		}
		delete(p.missed, oldest)
	}
	p.missed[seq] = struct{}{}
	p.coverage(true)
}

func (p *Predictor) coverage(miss bool) {
	err := 0.0
	if miss {
		err = 1
	}
	p.theta += aciRate * (err - (1 - p.cfg.Coverage))
	p.theta = min(max(p.theta, 0), thetaMax+thetaGrowth)
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
