package predict

import (
	"math"
	"slices"
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
//
// A prediction reads every request ahead, so the fields it reads come first: with the start of
// the Estimate they lie in the first 132 bytes.
type Pending struct {
	User   string
	Queue  string
	GPUs   float64
	Submit time.Time
	// Estimate is what Predict returned when the request was submitted, if it was. The request
	// then counts in the bounds of similar requests as one that has waited at least Now - Submit
	// so far (a censored observation), and once it is seen past its bound it counts as a miss
	// at once, without waiting for it to start. The zero value leaves it out.
	Estimate  Estimate
	Team      string
	Requested time.Duration
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
// holds what the predictor learns from (the Situation, and what each of its experts answered).
type Estimate struct {
	// What a prediction for a request behind this one reads, together and first (see Pending).
	valid bool               // made by Predict (so the fields below are set)
	run   float32            // its expected run time, in seconds
	seq   uint64             // which prediction it was
	x     [nFeatures]float32 // the situation as the neighbour search sees it

	// Median is the point prediction: read from the answers of the experts that have lately
	// done best for requests of this kind in this situation, in bands and in minutes (see
	// Predictor).
	Median time.Duration
	// P90 is the upper bound: nine requests in ten start within their bound. It is at least
	// Median and at least MinBound; a request whose wait is predictable gets a bound that
	// covers nearly every similar request, one whose wait is spread widely a shorter one that
	// covers fewer, so that the bounds are as tight as they can be for nine in ten overall.
	//
	// P90 is Unbounded when so many similar requests are still waiting, or left the queue
	// after waiting longer than any finite bound worth giving, that no such bound can be
	// given: show it as "may not start within Horizon".
	P90 time.Duration
	// Horizon is the longest wait the predictor has seen among the requests it remembers: the
	// span its history speaks for.
	Horizon time.Duration
	// StartShare is the estimated share of similar requests that start within the history's
	// span (1 when every one did; 0 with no history).
	StartShare float64
	Basis      int // outcomes behind the bound; 0 means no history yet
	Situation  Situation

	experts [nExperts]float32 // each expert's point, in seconds
	pick    float32           // the point the kinds chose, before the overall check
	bounds  [nBounds]float32  // each way's bound, in seconds (+Inf: Unbounded)
	bound   int8              // the way whose bound is P90
	kinds   [nLevels]uint64   // the request's kind at each level
	at      int64             // when it was made (Unix nanoseconds)
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
	// Drain is how long the requests ahead take to start at the pace requests have lately
	// been starting; UserDrain the same for the user's own requests ahead at the pace the
	// user's requests have been starting up to now (the pool's pace when the trace records no
	// users). Where a scheduler shares the pool among users, a user's long backlog drains at
	// the user's own pace.
	Drain     time.Duration
	UserDrain time.Duration
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
	aciRate         = 0.05  // step of the online correction of the bound's price (ln λ)
	levelRate       = 0.005 // step of the online correction of the quantile boundQuantile reads
	thetaStart      = 3     // initial price, as -ln λ (λ = 0.05)
	thetaMax        = 7     // past this (λ under 0.1 %) bounds grow beyond the neighbours' waits ...
	thetaGrowth     = 4     // ... by up to e⁴ times, ...
	thetaGuarded    = 6     // ... or e⁶ while the bound given falls short (see chooseBound)
	maxOpen         = 1 << 17
	userWindow      = 20  // recent waits remembered per user ...
	userFeature     = 10  // ... of which the situation reads the last ten
	allWindow       = 100 // recent waits remembered for everyone
	maxUsers        = 1 << 14
	maxQueues       = 1 << 8
)

// Predictor predicts queue waits from the live state of a pool and what it has learned online.
// It is safe for concurrent use. Use one Predictor per pool of GPUs (per class).
//
// Call Predict for every request when it is submitted (or shown a quote), keep the Estimate,
// call Observe when the request starts or leaves the queue, and ObserveRun when a lease ends;
// Track and Untrack the running leases to keep predictions cheap in large pools.
//
// The predictor simulates the pool forward (running leases end at their learned expected end,
// the queue ahead starts in order) and looks up what happened to requests in the most similar
// situations. Its answers come from panels of experts, each scored online per kind of request
// (queue; size; the band of the simulated start and the user's own requests ahead):
//
//   - The point is read from the experts' answers for the request's kind: the nearest
//     situations' median wait, the kind's recent median, the simulated start, and the simple
//     answers (no wait, everyone's recent median, the user's recent median, the queue's
//     QBETS-style median, the user's last wait). Its band is that of the expert whose recent
//     answers were most often in the right band; its minutes are the weighted median of the
//     answers, weighted by how close each expert has lately been, moved into that band.
//     Over all requests the chosen answers are scored as well, and yield their band to any
//     of the simple answers (the baselines') that has lately beaten them both in minutes and
//     in bands.
//   - The bound is read four ways: from the nearest situations' start curve, at a price for a
//     bound's length, as the waits were, as they were scaled to this situation's reference
//     wait, and the first but never under the reference wait; and as a quantile of the queue's
//     recent waits. Each way's price (or level) is corrected online, so that nine requests in
//     ten start within its bounds. Of the ways that hold, the one whose bounds have lately
//     been the shortest next to the other ways' bounds for the same requests is given.
type Predictor struct {
	mu      sync.Mutex
	cfg     Config
	seenCap float64
	rt      runtimes
	nb      neighbours
	sc      simScratch
	run     trackedLeases
	curve   []step
	scratch []outcome
	vals    []float64
	users   *capped[string, *userWaits]
	all     userWaits
	qbets   QBETS
	kinds   *capped[uint64, *kindStats]
	global  kindStats
	// theta is, for each way of reading a bound, -ln λ, the (negated) price of a longer bound,
	// corrected online like adaptive conformal inference: every miss of the way's bound raises
	// it by aciRate × Coverage, every hit lowers it by aciRate × (1 - Coverage), so that the
	// long-run share of requests within each way's bound tracks Coverage. Past thetaMax the
	// bounds grow beyond the neighbours' waits.
	theta [nBounds]float64
	// level is the quantile of the queue's recent waits that boundQuantile reads, corrected
	// online the same way: up by levelRate × Coverage on a miss, down by levelRate × (1 -
	// Coverage) on a hit.
	level   float64
	hits    [nBounds]float64 // each way's recent share of hits ...
	scored  [nBounds]float64 // ... over this many outcomes
	shorter [nBounds]float64 // each way's running median of ln(bound) less the ways' mean, over requests that waited a minute or more ...
	long    float64          // ... this many
	// The bound given (the way chooseBound took for each request) is scored as the ways are:
	// its recent share of hits, over this many outcomes, and whether the choice is held to the
	// way that held most often until that share has come back (see chooseBound).
	givenHits   float64
	givenScored float64
	guarded     bool
	seq         uint64 // predictions made
	// Estimates of requests seen waiting in State.Queue, until they are observed: a bound is
	// counted as missed as soon as its request is past it.
	open    *capped[uint64, *openEstimate]
	dues    []due
	maxSeen uint64
}

type userWaits struct {
	w      *window // the last userWindow waits: the user_recent expert
	recent *window // the last userFeature of them: the situation's UserWait
	last   float64
	starts pace
}

// pace keeps the moments (Unix nanoseconds) of the last few starts.
type pace struct {
	at [paceStarts]int64
	n  int
}

const paceStarts = 16

func (p *pace) add(t int64) {
	p.at[p.n%paceStarts] = t
	p.n++
}

// span is how many recent starts there are, and the oldest and newest of them.
func (p *pace) span() (n int, lo, hi int64) {
	n = min(p.n, paceStarts)
	lo, hi = p.at[0], p.at[0]
	for _, t := range p.at[:n] {
		lo, hi = min(lo, t), max(hi, t)
	}
	return n, lo, hi
}

// gap is the mean time between the recent starts, in seconds; ok is false with fewer than two.
func (p *pace) gap() (float64, bool) {
	n, lo, hi := p.span()
	if n < 2 {
		return 0, false
	}
	return float64(hi-lo) * 1e-9 / float64(n-1), true
}

// gapUntil is the time from the oldest of the recent starts until now over their number, in
// seconds: the mean gap as it stands now. A user's starts come in clumps (a dozen of a burst
// start together when a large job ends, then none for hours), where the gaps within the clump
// would make the user's backlog look several times faster to drain than it is. ok is false with
// fewer than two.
func (p *pace) gapUntil(now int64) (float64, bool) {
	n, lo, _ := p.span()
	if n < 2 {
		return 0, false
	}
	return float64(max(now-lo, 0)) * 1e-9 / float64(n), true
}

// New returns a Predictor with no history.
func New(cfg Config) *Predictor {
	if cfg.Coverage <= 0 || cfg.Coverage >= 1 {
		cfg.Coverage = DefaultCoverage
	}
	p := &Predictor{cfg: cfg, users: newCapped[string, *userWaits](maxUsers), kinds: newCapped[uint64, *kindStats](maxKinds),
		open: newCapped[uint64, *openEstimate](maxOpen)}
	for w := range p.theta {
		p.theta[w], p.hits[w] = thetaStart, cfg.Coverage
	}
	p.level = cfg.Coverage
	p.rt.init()
	p.nb.init()
	p.sc.horizon = 3600
	p.all.w, p.all.recent = newWindow(allWindow), newWindow(allWindow)
	p.qbets.N = qbetsWindow
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
	if u, ok := p.users.get(req.User); ok {
		uw = u
	}
	est.Situation.UserWait, est.Situation.LastWait = secs(quantile(uw.recent.view(), 0.5)), secs(uw.last)
	// The queue ahead: its age, the user's own requests in it, and the requests in it that were
	// estimated here (to be counted as misses once past their bounds). A sample of them joins
	// the neighbours as still waiting (query).
	stride := max(len(st.Queue)/maxPendingScan, 1)
	maxSeen := p.maxSeen
	now := st.Now.UnixNano()
	oldest := now
	for i := range st.Queue {
		q := &st.Queue[i]
		submit := q.Submit.UnixNano()
		oldest = min(oldest, submit)
		if q.User == req.User {
			est.Situation.UserAhead++
		}
		if !q.Estimate.valid {
			continue
		}
		if q.Estimate.seq > p.maxSeen {
			p.watch(&q.Estimate, submit)
			maxSeen = max(maxSeen, q.Estimate.seq)
		}
	}
	est.Situation.QueueAge = time.Duration(now - oldest)
	p.maxSeen = maxSeen
	allGap, _ := p.all.starts.gap()
	est.Situation.Drain = secs(allGap * float64(est.Situation.Ahead))
	// A user's pace is measured up to now (see gapUntil); where no user is recorded, every
	// request is the one unnamed user's, and the pool's pace stands in.
	if g, ok := uw.starts.gapUntil(now); ok && uw != &p.all && req.User != "" {
		est.Situation.UserDrain = secs(g * float64(est.Situation.UserAhead))
	} else {
		est.Situation.UserDrain = secs(allGap * float64(est.Situation.UserAhead))
	}
	p.overdue(now)
	p.seq++
	est.x, est.valid, est.seq, est.at = features(&est.Situation, &req), true, p.seq, now
	est.run = float32(p.rt.remaining(req.User, req.Queue, req.Requested.Seconds(), 0))
	ref := reference(&est.Situation)

	recent, obs := p.nb.query(est.x, req.Queue, st.Queue, stride, now)
	short := len(p.nb.xs) < neighbourCount || len(obs) == 0

	// The point: the experts' answers, and the one chosen for the kind.
	knn := sim.backfill
	if !short && len(recent) > 0 {
		knn = p.median(recent)
	}
	est.kinds = p.kindsOf(&req, &est.Situation)
	ks := p.statsOf(est.kinds)
	kindMedian := quantile(p.all.w.view(), 0.5)
	for l := nLevels - 1; l >= 1; l-- {
		if w := ks[l].waits; w.len() >= minKindWaits {
			kindMedian = quantile(w.view(), 0.5)
			break
		}
	}
	userMedian := quantile(p.all.w.view(), 0.5)
	if uw != &p.all {
		userMedian = quantile(uw.w.view(), 0.5)
	}
	est.experts = [nExperts]float32{
		expKNN:    float32(knn),
		expKind:   float32(kindMedian),
		expSim:    float32(sim.backfill),
		expZero:   0,
		expRecent: float32(quantile(p.all.w.view(), 0.5)),
		expUser:   float32(userMedian),
		expQBETS:  float32(p.qbets.Predict(req, st).Median.Seconds()),
		expLast:   float32(uw.last),
	}
	est.pick = p.choosePoint(ks, &est.experts)
	point := p.global.overrule(est.pick, &est.experts)
	est.Median = secs(float64(point))

	// The bound, each way at its own price.
	if short {
		// Until the history holds as many outcomes as a prediction rests on, the nearest
		// situations may be nothing like this one (a few immediate starts on an empty pool,
		// say, against a full one now): trust the simulation.
		b := float32(max(2*sim.queued, MinBound.Seconds(), est.Median.Seconds()))
		for w := range est.bounds {
			est.bounds[w] = b
		}
		est.P90 = secs(float64(b))
		return est
	}
	longest := p.nb.longestWait()
	est.Horizon = secs(longest)
	est.Basis = len(obs)
	median := est.Median.Seconds()
	p.curve = p.startCurve(obs, 0)
	est.StartShare = reach(p.curve)
	est.bounds[boundAsWas] = p.boundAt(boundAsWas, longest, median)
	est.bounds[boundFloored] = max(p.boundAt(boundFloored, longest, median), float32(ref))
	p.curve = p.startCurve(obs, ref)
	est.bounds[boundScaled] = p.boundAt(boundScaled, longest, median)
	est.bounds[boundQuantile] = float32(max(median, MinBound.Seconds()))
	if w := p.qbets.s.sample(req.Queue); w != nil {
		est.bounds[boundQuantile] = float32(max(quantile(w.view(), p.level), median, MinBound.Seconds()))
	}
	est.bound = int8(p.chooseBound())
	if b := est.bounds[est.bound]; math.IsInf(float64(b), 1) {
		est.P90 = Unbounded
	} else {
		est.P90 = secs(float64(b))
	}
	return est
}

// median is the median wait of the outcomes.
func (p *Predictor) median(outs []outcome) float64 {
	v := p.vals[:0]
	for _, o := range outs {
		v = append(v, o.t)
	}
	slices.Sort(v)
	p.vals = v
	return quantile(v, 0.5)
}

// scaleTo is an outcome's time scaled from its situation's reference wait to ref (0: as it was).
func scaleTo(o outcome, ref float64) float64 {
	if ref <= 0 {
		return o.t
	}
	return o.t * ref / o.ref
}

// startCurve is the start curve of the outcomes scaled to ref (0: as they were).
func (p *Predictor) startCurve(obs []outcome, ref float64) []step {
	s := append(p.scratch[:0], obs...)
	for i := range s {
		s[i].t = scaleTo(s[i], ref)
	}
	sortOutcomes(s)
	p.scratch = s
	return startCurve(s, p.curve)
}

// boundAt is the bound way w's price gives on the start curve: the point of the curve that
// buys the most coverage for its length, or +Inf (Unbounded), which covers every request and is
// priced as a bound as long as the longest wait in the history (a minute at least): it wins when
// too many similar requests are still waiting. Past thetaMax the bound grows beyond the curve.
// It is never under median nor MinBound.
func (p *Predictor) boundAt(w int, longest, median float64) float32 {
	theta := p.theta[w]
	lambda := math.Exp(-min(theta, thetaMax))
	hi, value := bestBound(p.curve, lambda, p.cfg.Coverage)
	// Unbounded covers every request that starts, sooner or later; those that leave the queue
	// are left out of the count, worth Coverage each.
	if 1-(1-p.cfg.Coverage)*gone(p.curve)-lambda*math.Log1p(max(longest, 60)/60) > value {
		return float32(math.Inf(1))
	}
	if theta > thetaMax { // more coverage wanted than the curve gives: grow past it
		hi *= math.Exp(theta - thetaMax)
	}
	return float32(max(hi, median, MinBound.Seconds()))
}

// Observe feeds back what happened to an estimated request: its wait when it started, or how
// long it had waited when it left the queue without starting. Report each request once.
//
// A request that left without starting is right-censored: a bound shorter than its wait was
// missed, a longer one is neither hit nor miss. One already seen in the queue past its bound
// was counted then.
func (p *Predictor) Observe(o Observation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := &o.Estimate
	if e.valid {
		var counted uint8
		if oe, ok := p.open.get(e.seq); ok {
			counted = oe.counted
			p.open.delete(e.seq)
		}
		ks := p.existingStats(e.kinds)
		w := float32(o.Wait.Seconds())
		for way, b := range e.bounds {
			if counted&(1<<way) == 0 && (o.Started || w > b) {
				p.coverage(way, w > b)
				if way == int(e.bound) {
					p.givenCoverage(w > b)
				}
			}
		}
		if o.Started {
			p.scoreBounds(e, w)
			p.scorePoints(ks, e, w)
		}
	}
	p.learn(o)
}

// Remember teaches the predictor an outcome it did not see itself, such as one kept from before
// a restart: like Observe, but what the experts and the bounds are scored on is left alone,
// since what they answered is not known. Of o.Estimate only the Situation is read.
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
	kinds := o.Estimate.kinds
	if !o.Estimate.valid {
		x = features(&o.Estimate.Situation, &o.Request)
		kinds = p.kindsOf(&o.Request, &o.Estimate.Situation)
	}
	p.nb.add(x, o.Request.Queue, w, reference(&o.Estimate.Situation), !o.Started)
	if !o.Started {
		return
	}
	u, ok := p.users.get(o.Request.User)
	if !ok {
		u = &userWaits{w: newWindow(userWindow), recent: newWindow(userFeature)}
		p.users.put(o.Request.User, u)
	}
	u.w.add(w)
	u.recent.add(w)
	u.last = w
	p.all.w.add(w)
	p.all.recent.add(w)
	p.all.last = w
	if o.Estimate.valid {
		start := o.Estimate.at + int64(w*1e9)
		u.starts.add(start)
		p.all.starts.add(start)
	}
	p.qbets.Observe(o)
	for l := 1; l < nLevels; l++ {
		if ks := p.statsFor(kinds[l], l); ks != nil {
			ks.waits.add(w)
		}
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
