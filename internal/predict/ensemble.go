package predict

import (
	"cmp"
	"math"
	"slices"
)

// The experts whose points the predictor chooses from (Estimate.experts).
const (
	expKNN    = iota // median wait of the nearest situations (the simulated start while the history is short)
	expKind          // median of the recent waits of requests of the same kind
	expSim           // the simulated start (first hole of the queue's schedule)
	expZero          // no wait
	expRecent        // median of everyone's last 100 waits (the recent100 baseline)
	expUser          // median of the user's last 20 waits (the user_recent baseline)
	expQBETS         // the QBETS-style point for the queue (the qbets baseline)
	expLast          // the user's last wait
	nExperts
)

// The ways a bound is read from the nearest situations (Estimate.bounds).
const (
	boundAsWas    = iota // from their waits as they were
	boundScaled          // from their waits scaled to this situation's reference wait
	boundFloored         // the first, never under the reference wait
	boundQuantile        // a quantile of the queue's recent waits (the QBETS-style sample), its level learned online
	nBounds
)

// Kinds of request, from coarse to fine (Estimate.kinds): everything; the queue; the queue and
// the size; the queue, the size and the situation (the band of the simulated start and how
// many of the user's own requests are ahead).
const (
	levelAll = iota
	levelQueue
	levelSize
	levelSituation
	nLevels
)

const (
	maxKinds       = 1 << 13 // kinds remembered; past this the oldest is forgotten
	minKindPoints  = 16      // started requests of a kind before its experts' scores are read
	minKindWaits   = 8       // waits of a kind before its median is an expert's answer
	kindWaitWindow = 64      // recent waits kept per kind
	// Recent scores are averaged with weights that fall by 1/256 per request of a kind (about
	// the last 180 count half), and by 1/4096 over all requests.
	kindRate   = 1.0 / 256
	globalRate = 1.0 / 4096
	// An expert's score adds its mean absolute error and its share of wrong bands, each over
	// the best expert's: the point is judged in minutes and in bands alike. The floors keep
	// near-perfect experts from making every other look infinitely worse.
	aeFloor   = 30   // seconds
	bandFloor = 0.02 // share
	// maxPendingScan bounds the queued requests that join a neighbour search as still waiting:
	// a longer queue is sampled evenly.
	maxPendingScan = 512
	// A way of reading bounds is eligible while its bounds' share of hits (over all outcomes,
	// or the last hitWindow or so once there are more) is within coverageSlack of Coverage.
	hitWindow     = 1 << 16
	coverageSlack = 0.01
	// When the bound given has covered less than Coverage by more than guardSlack (over at least
	// guardMin outcomes), the way that held most often is given until the bound given is back
	// within guardBack of Coverage.
	guardSlack = 0.015
	guardBack  = 0.005
	guardMin   = 100
	blendScale = 0.1  // see blend
	medianStep = 0.01 // step of a way's running median of ln(bound) against the other ways'
)

// kindStats is what the predictor has learned about one kind of request: each expert's recent
// errors (and, at the top level, those of the answer the kinds chose), and the kind's recent
// waits.
type kindStats struct {
	n     float64               // started requests scored
	ae    [nExperts + 1]float64 // recent mean absolute error, seconds
	bm    [nExperts + 1]float64 // recent share of wrong bands
	waits *window               // recent waits
}

// sizeBand groups request sizes by factors of four: under 2, 2-3, 4-15, 16-63, 64-255, 256
// and more.
func sizeBand(gpus float64) uint64 {
	switch {
	case gpus < 2:
		return 0
	case gpus < 4:
		return 1
	case gpus < 16:
		return 2
	case gpus < 64:
		return 3
	case gpus < 256:
		return 4
	}
	return 5
}

// kindsOf is the request's kind at each level.
func (p *Predictor) kindsOf(req *Request, s *Situation) [nLevels]uint64 {
	q := uint64(p.nb.queueID(req.Queue)) & 0xffff
	ahead := uint64(0)
	switch {
	case s.UserAhead >= 10:
		ahead = 2
	case s.UserAhead > 0:
		ahead = 1
	}
	state := uint64(Band(s.Backfill))*3 + ahead
	size := sizeBand(req.GPUs)
	return [nLevels]uint64{
		levelAll:       0,
		levelQueue:     1<<60 | q,
		levelSize:      2<<60 | q<<8 | size,
		levelSituation: 3<<60 | q<<16 | size<<8 | state,
	}
}

// statsFor is the stats of kind k at level l, or nil when it is not (or no longer) known.
func (p *Predictor) statsFor(k uint64, l int) *kindStats {
	if l == levelAll {
		return &p.global
	}
	if ks, ok := p.kinds.get(k); ok {
		return ks
	}
	return nil
}

// statsOf is the stats of each of the kinds, made when missing.
func (p *Predictor) statsOf(kinds [nLevels]uint64) [nLevels]*kindStats {
	var out [nLevels]*kindStats
	if p.global.waits == nil {
		p.global.waits = newWindow(kindWaitWindow)
	}
	out[levelAll] = &p.global
	for l := 1; l < nLevels; l++ {
		ks, ok := p.kinds.get(kinds[l])
		if !ok {
			ks = &kindStats{waits: newWindow(kindWaitWindow)}
			p.kinds.put(kinds[l], ks)
		}
		out[l] = ks
	}
	return out
}

// existingStats is like statsOf but leaves a forgotten kind nil.
func (p *Predictor) existingStats(kinds [nLevels]uint64) [nLevels]*kindStats {
	var out [nLevels]*kindStats
	for l := range out {
		out[l] = p.statsFor(kinds[l], l)
	}
	return out
}

// choosePoint is the answer for the finest kind that has seen enough requests (the nearest
// situations' before any has): the band of the expert whose recent answers fell in the right
// band most often, and in it the experts' blended minutes, moved into that band when they lie
// outside. Band accuracy is then that expert's, and the minutes lose nothing where the band is
// right.
func (p *Predictor) choosePoint(ks [nLevels]*kindStats, experts *[nExperts]float32) float32 {
	for l := nLevels - 1; l >= 0; l-- {
		if ks[l] != nil && ks[l].n >= minKindPoints {
			return inBand(ks[l].blend(experts), Band(secs(float64(experts[ks[l].bandBest()]))))
		}
	}
	return experts[expKNN]
}

// bandBest is the expert with the fewest recent wrong bands (the first of equals).
func (k *kindStats) bandBest() int {
	best := 0
	for e := range nExperts {
		if k.bm[e] < k.bm[best] {
			best = e
		}
	}
	return best
}

// blend is the weighted median of the experts' answers, with weights that fall by a factor e
// for every blendScale of the lowest recent mean absolute error (plus aeFloor) by which an
// expert's is higher: the closest expert's answer, unless those nearly as close lie together on
// one side of it.
func (k *kindStats) blend(experts *[nExperts]float32) float32 {
	lo := math.Inf(1)
	for e := range nExperts {
		lo = min(lo, k.ae[e])
	}
	lo += aeFloor
	var order [nExperts]int
	var w [nExperts]float64
	wsum := 0.0
	for e := range nExperts {
		order[e] = e
		w[e] = math.Exp(-(k.ae[e] + aeFloor - lo) / (blendScale * lo))
		wsum += w[e]
	}
	slices.SortFunc(order[:], func(a, b int) int { return cmp.Compare(experts[a], experts[b]) })
	acc := 0.0
	for _, e := range order {
		acc += w[e]
		if acc >= wsum/2 {
			return experts[e]
		}
	}
	return experts[order[nExperts-1]]
}

// bandEdges are the waits, in seconds, where the bands of Band begin.
var bandEdges = [...]float32{0, 60, 600, 3600, 6 * 3600}

// inBand is v (seconds) moved into band b: to its nearest edge when it lies outside.
func inBand(v float32, b int) float32 {
	if v < bandEdges[b] {
		return bandEdges[b]
	}
	if b+1 < len(bandEdges) && v >= bandEdges[b+1] {
		return bandEdges[b+1] - 1
	}
	return v
}

// baselineExperts are the experts that answer as the simple baselines do (no wait, everyone's
// recent median, the user's, the queue's QBETS-style median): the answers the point must never
// be worse than for long.
var baselineExperts = [...]int{expZero, expRecent, expUser, expQBETS}

// overrule is the answer, over all requests, once a baseline expert has lately done better
// than the answers the kinds chose both in minutes and in bands (the one with the lowest score
// among such): that expert's band, and in it the experts' minutes blended over all requests.
// The chosen answer stands while none has, and its band stands where another such baseline
// with no more wrong bands than that one gives the same band: baselines that have done as well
// as each other on bands and disagree on this request are no reason to move it (on a cluster
// where most requests start at once, "no wait" and the recent median are often both ahead, by
// turns a hair apart). The other experts do not overrule: the kinds already
// choose among them, and one that was lately ahead over all requests by a little is ahead by
// chance as often as not (MetaCentrum's MAE was 413.7 minutes with every expert overruling,
// 408.3 with the baselines alone).
func (k *kindStats) overrule(pick float32, experts *[nExperts]float32) float32 {
	if k.n < minKindPoints {
		return pick
	}
	best, score := -1, math.Inf(1)
	for _, e := range baselineExperts {
		if k.ae[e] >= k.ae[nExperts] || k.bm[e] >= k.bm[nExperts] {
			continue
		}
		if s := k.ae[e]/(k.ae[nExperts]+aeFloor) + k.bm[e]/(k.bm[nExperts]+bandFloor); s < score {
			best, score = e, s
		}
	}
	if best < 0 {
		return pick
	}
	band, chosen := Band(secs(float64(experts[best]))), Band(secs(float64(pick)))
	for _, e := range baselineExperts {
		if k.ae[e] < k.ae[nExperts] && k.bm[e] <= k.bm[best] && Band(secs(float64(experts[e]))) == chosen {
			band = chosen
			break
		}
	}
	return inBand(k.blend(experts), band)
}

// scorePoints updates every level's record of its experts' errors with a request that started
// after waiting w seconds.
func (p *Predictor) scorePoints(ks [nLevels]*kindStats, e *Estimate, w float32) {
	band := Band(secs(float64(w)))
	for l, k := range ks {
		if k == nil {
			continue
		}
		k.n++
		rate := max(1/k.n, kindRate)
		n := nExperts
		if l == levelAll {
			rate = max(1/k.n, globalRate)
			n++ // and the answer the kinds chose
		}
		for x := range n {
			v := e.pick
			if x < nExperts {
				v = e.experts[x]
			}
			miss := 0.0
			if Band(secs(float64(v))) != band {
				miss = 1
			}
			k.ae[x] += rate * (math.Abs(float64(v-w)) - k.ae[x])
			k.bm[x] += rate * (miss - k.bm[x])
		}
	}
}

// chooseBound is the way whose bounds have lately been the shortest, next to the other ways'
// bounds for the same requests (those that waited a minute or more), among the ways whose
// bounds have held for their share of requests over all outcomes (within coverageSlack). Every
// way's price is corrected to that share on its own, so this compares the ways at the same
// coverage: the shorter bounds for the same share of hits win. A way that keeps falling short
// (its price is at its limit, as when misses come in bursts) is not eligible; when none is, the
// way that held most often is taken.
//
// Taking, request by request, the shortest of ways that each hold their share can hold less
// than any of them: the shortest bound is the likeliest to be missed. So the bound given is
// scored too, and while it has fallen short of Coverage by more than guardSlack the way that
// held most often is given, until the bound given is back within guardBack. Meanwhile each
// way's price may take its bounds further past the neighbours' waits (thetaGuarded): where
// misses come in bursts, as when a burst of one user's requests cannot be told from the rest of
// the queue, the usual limit is reached before the burst's misses are all counted.
func (p *Predictor) chooseBound() int {
	best, closest := -1, boundAsWas
	for w := range nBounds {
		if p.hits[w] > p.hits[closest] {
			closest = w
		}
		if p.hits[w] >= p.cfg.Coverage-coverageSlack && (best < 0 || p.shorter[w] < p.shorter[best]) {
			best = w
		}
	}
	if p.givenScored >= guardMin {
		switch {
		case p.givenHits < p.cfg.Coverage-guardSlack:
			p.guarded = true
		case p.givenHits >= p.cfg.Coverage-guardBack:
			p.guarded = false
		}
	}
	if best < 0 || p.guarded {
		return closest
	}
	return best
}

// givenCoverage scores the bound given after a hit or a miss, as coverage scores each way's.
func (p *Predictor) givenCoverage(miss bool) {
	hit := 1.0
	if miss {
		hit = 0
	}
	p.givenScored++
	p.givenHits += (hit - p.givenHits) / min(p.givenScored, hitWindow)
}

// scoreBounds keeps, for a request that started after waiting a minute or more, each way's
// running median of ln(bound) less the mean of every way's ln(bound) for that request: from the
// first value on, a step of medianStep towards each new one (an Unbounded bound counts as ten
// times the horizon). The ways are compared request by request, so what one request's wait
// says of every way alike (a wait far past every bound early in a trace, when none has learned
// its price yet) moves none of them against the others, and the comparison is sound from the
// first requests on. The median is what tightness is measured by; a mean would let a few
// Unbounded answers, or a few far too long bounds, count for more than they do there.
func (p *Predictor) scoreBounds(e *Estimate, w float32) {
	if w < 60 {
		return
	}
	p.long++
	top := math.Log(e.Horizon.Seconds()*10 + 60)
	var lb [nBounds]float64
	mean := 0.0
	for b, bound := range e.bounds {
		lb[b] = min(math.Log(float64(bound)), top)
		mean += lb[b] / nBounds
	}
	for b := range e.bounds {
		r := lb[b] - mean
		switch {
		case p.long == 1:
			p.shorter[b] = r
		case r > p.shorter[b]:
			p.shorter[b] += medianStep
		case r < p.shorter[b]:
			p.shorter[b] -= medianStep
		}
	}
}

// coverage corrects way w's price after a hit or a miss of its bound, in the manner of
// adaptive conformal inference: a miss raises -ln λ by aciRate × Coverage, a hit lowers it by
// aciRate × (1 - Coverage), so that the long-run share of requests within the way's bounds
// tracks Coverage.
func (p *Predictor) coverage(w int, miss bool) {
	err := 0.0
	if miss {
		err = 1
	}
	p.scored[w]++
	p.hits[w] += (1 - err - p.hits[w]) / min(p.scored[w], hitWindow)
	if w == boundQuantile {
		p.level += levelRate * (err - (1 - p.cfg.Coverage))
		p.level = min(max(p.level, 0), 1)
		return
	}
	p.theta[w] += aciRate * (err - (1 - p.cfg.Coverage))
	growth := float64(thetaGrowth)
	if p.guarded {
		growth = thetaGuarded
	}
	p.theta[w] = min(max(p.theta[w], 0), thetaMax+growth)
}

// openEstimate is an estimate whose request was seen waiting: when it was submitted, the bounds
// it gave, and which of them were counted as missed.
type openEstimate struct {
	submit  int64 // Unix nanoseconds
	bounds  [nBounds]float32
	counted uint8 // bit w: way w's bound was counted as missed
	given   int8  // the way whose bound was given
}

// due is the moment (Unix nanoseconds) an open estimate's next bound runs out.
type due struct {
	at  int64
	seq uint64
}

func dueBefore(a, b *due) bool { return a.at < b.at }

// watch starts watching the estimate of a request seen waiting.
func (p *Predictor) watch(e *Estimate, submit int64) {
	oe := &openEstimate{submit: submit, bounds: e.bounds, given: e.bound}
	p.open.put(e.seq, oe)
	p.schedule(e.seq, oe)
}

// schedule queues the moment the shortest bound of oe not yet counted runs out.
func (p *Predictor) schedule(seq uint64, oe *openEstimate) {
	next := math.Inf(1)
	for w, b := range oe.bounds {
		if oe.counted&(1<<w) == 0 {
			next = min(next, float64(b))
		}
	}
	if !math.IsInf(next, 1) {
		p.dues = heapPush(p.dues, due{oe.submit + int64(next*1e9), seq}, dueBefore)
	}
}

// overdue counts a miss for every bound that ran out before now while its request still waited.
func (p *Predictor) overdue(now int64) {
	for len(p.dues) > 0 && p.dues[0].at < now {
		var d due
		d, p.dues = heapPop(p.dues, dueBefore)
		oe, ok := p.open.get(d.seq)
		if !ok {
			continue
		}
		for w, b := range oe.bounds {
			// An Unbounded bound never runs out (and +Inf seconds have no nanoseconds).
			if oe.counted&(1<<w) == 0 && !math.IsInf(float64(b), 1) && oe.submit+int64(float64(b)*1e9) < now {
				oe.counted |= 1 << w
				p.coverage(w, true)
				if w == int(oe.given) {
					p.givenCoverage(true)
				}
			}
		}
		p.schedule(d.seq, oe)
	}
}
