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
// request starts (or leaves the queue): the simulated starts are what the calibration learns from.
type Estimate struct {
	Median time.Duration // point prediction: half of similar requests waited less
	P90    time.Duration // upper bound: about nine requests in ten start within it

	Alone  time.Duration // simulated start if the request could use the first free GPUs (backfill)
	Queued time.Duration // simulated start behind every request ahead, first come first served
	Basis  int           // observed waits behind Median and P90; 0 means no history yet
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
	// Window is how many recent waits each calibration cell keeps (default 128).
	Window int
}

// Default tuning. None of these depends on a particular cluster: cells are keyed by orders of
// magnitude of simulated wait and fill from the cluster's own history.
const (
	DefaultCoverage = 0.9
	DefaultWindow   = 128
	minCell         = 12    // waits a calibration cell needs before it is trusted
	aciRate         = 0.005 // step of the online coverage correction
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
	cal     calibrator
	sc      simScratch
}

// New returns a Predictor with no history.
func New(cfg Config) *Predictor {
	if cfg.Coverage <= 0 || cfg.Coverage >= 1 {
		cfg.Coverage = DefaultCoverage
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	p := &Predictor{cfg: cfg}
	p.rt.init()
	p.cal.init(cfg.Window, 1-cfg.Coverage)
	return p
}

// Predict estimates how long req will wait in the pool described by st.
func (p *Predictor) Predict(req Request, st State) Estimate {
	p.mu.Lock()
	defer p.mu.Unlock()
	alone, queued := p.simulate(req, st)
	est := Estimate{Alone: secs(alone), Queued: secs(queued)}
	med, hi, n := p.cal.estimate(req.Queue, alone, queued)
	est.Median, est.P90, est.Basis = secs(med), secs(hi), n
	return est
}

// Observe feeds back what happened to an estimated request: its wait when it started, or how
// long it had waited when it left the queue without starting (which teaches the bound only).
// An observation whose request was still waiting past its P90 may be reported early with
// Started false; report each request once.
func (p *Predictor) Observe(o Observation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := o.Wait.Seconds()
	if o.Started {
		p.cal.observe(o.Request.Queue, o.Estimate.Alone.Seconds(), o.Estimate.Queued.Seconds(), w)
		p.cal.coverage(w > o.Estimate.P90.Seconds())
	} else if w > o.Estimate.P90.Seconds() {
		p.cal.coverage(true)
	}
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
