package predict

import (
	"math"
	"slices"
	"time"
)

// neighbours maps a request's situation to what happened to the most similar recent requests.
//
// A situation is a short vector: the three simulated starts, the user's recent waits, the
// requested duration and size, all on a log scale (a minute against two minutes counts as much
// as an hour against two), plus the queue. The simulation knows the pool but not the
// scheduler's priorities, reservations or fragmentation; the neighbours' real waits carry those.
//
// Each remembered request either started after its wait or left the queue without starting
// after its wait. Requests still waiting in the live queue join a query as right-censored
// observations: they have waited at least their age so far. The median comes from the nearest
// among the most recent situations, the bound from the nearest among a longer history, since a
// tail needs more examples than a middle.
type neighbours struct {
	xs      [][nFeatures]float32
	queue   []int32
	wait    []float32
	ref     []float32 // the reference wait of the situation (reference)
	gone    []bool    // left the queue without starting
	next    int
	longest float64 // the longest wait of a remembered request that started; <0: recompute
	queues  map[string]int32
	// The index (nil until the first is built) and the situations added since the snapshot it
	// was built from, which are searched one by one; a situation they replaced is marked gone
	// from its leaf. Every rebuildEvery situations a new index is built, from a snapshot, in a
	// goroutine of its own, and taken in once ready; the search finds the same neighbours with
	// either index, only sooner or later.
	ix       *index
	fresh    int         // situations added since ix's snapshot
	building chan *index // the build under way, or nil
	since    int         // situations added since its snapshot
	spare    *index      // the index before ix, whose buffers the next build reuses

	// scratch for one query
	cand   []cand
	rcand  []cand
	stack  []int32
	seen   []uint32 // the query that last visited each ring position
	prev   []cand   // the last query's neighbours
	stamp  uint32   // queries made
	pcand  []cand
	obs    []outcome
	recent []outcome
}

// index is a k-d tree of a snapshot of the remembered situations: halved again and again at the
// median of the feature that spreads widest, down to leaves of at most leafSize; every node
// keeps the box (least and greatest value of every feature) that holds its situations. A query
// descends the nearer child first and skips a node whose box is farther than the k-th nearest
// found so far. The older situations and the recent ones have a tree each, since an older one
// can only join the k nearest of all.
type index struct {
	perm  []int32 // ring positions, leaf by leaf; -1: replaced since the snapshot
	keys  []float32
	lx    [][nFeatures]float32 // the situations in perm's order, so that a leaf is read in one run
	where []int32              // index in perm of each ring position of the snapshot
	nodes []node
	roots [2]int32             // the trees of the older and of the recent situations; -1: none
	xs    [][nFeatures]float32 // the snapshot: the ring's situations ...
	queue []int32              // ... and their queues
}

// node is a node of the k-d tree: its situations are perm[from:to], in its box lo..hi; a
// leaf has no children (left < 0).
type node struct {
	lo, hi      [nFeatures]float32
	from, to    int32
	left, right int32
	dim         int8    // the feature it was split on ...
	at          float32 // ... at this value: the left child holds the smaller values
	queue       int32   // the queue all its situations are in, or mixedQueues
}

// mixedQueues is node.queue for a node whose situations are in more than one queue.
const mixedQueues = math.MinInt32

type cand struct {
	d float32
	i int32
}

// outcome is one neighbour's fate: started after t seconds, left without starting after t
// seconds, or (censored) still waiting at age t.
type outcome struct {
	t    float64
	ref  float64 // the reference wait of its situation (see reference)
	kind outcomeKind
}

type outcomeKind int8

const (
	started outcomeKind = iota
	left
	waiting
)

const nFeatures = 13

// reference is the wait a situation suggests by itself: the simulated first-come start, or the
// user's backlog at the user's pace, whichever is longer; a minute at least.
func reference(s *Situation) float64 {
	return max(s.Queued.Seconds(), s.UserDrain.Seconds(), 60)
}

const (
	neighbourCount = 32   // k: outcomes a prediction rests on
	historySize    = 2048 // recent situations searched for the bound
	recentSize     = 1024 // the most recent of them, searched for the median
	queuePenalty   = 1.0  // distance between different queues
	// pendingCount is how many still-waiting requests may join a neighbour set: a quarter of
	// it, so that the outcomes always outweigh the censored.
	pendingCount = neighbourCount
	leafSize     = 8   // situations in a leaf of the index
	splitSample  = 64  // situations a split of the index reads the spread of the features from
	rebuildEvery = 128 // situations added between two builds of the index
)

func (n *neighbours) init() {
	n.queues = map[string]int32{}
}

// queueID numbers the queues as they come, up to maxQueueIDs of them; the queues after those
// share one number (they are told apart by nothing but their features).
func (n *neighbours) queueID(q string) int32 {
	id, ok := n.queues[q]
	if !ok {
		if len(n.queues) >= maxQueueIDs {
			return maxQueueIDs
		}
		id = int32(len(n.queues))
		n.queues[q] = id
	}
	return id
}

// maxQueueIDs is how many queues get a number of their own.
const maxQueueIDs = 1 << 12

func features(s *Situation, req *Request) [nFeatures]float32 {
	lm := func(d time.Duration) float32 { return float32(math.Log1p(max(d.Seconds(), 0) / 60)) }
	return [nFeatures]float32{
		lm(s.Alone),
		lm(s.Backfill),
		lm(s.Queued),
		lm(s.UserWait),
		lm(s.LastWait),
		lm(req.Requested),
		float32(math.Log1p(max(req.GPUs, 0))),
		lm(s.RecentWait),
		lm(s.QueueAge),
		float32(math.Log1p(float64(s.Ahead))),
		float32(math.Log1p(float64(s.UserAhead))),
		lm(s.Drain),
		lm(s.UserDrain),
	}
}

func (n *neighbours) add(x [nFeatures]float32, queue string, wait, ref float64, gone bool) {
	q := n.queueID(queue)
	if !gone && n.longest >= 0 {
		n.longest = max(n.longest, float64(float32(wait)))
	}
	n.fresh++
	n.since++
	if len(n.xs) < historySize {
		n.xs = append(n.xs, x)
		n.queue = append(n.queue, q)
		n.wait = append(n.wait, float32(wait))
		n.ref = append(n.ref, float32(ref))
		n.gone = append(n.gone, gone)
		n.reindex()
		return
	}
	if !n.gone[n.next] && float64(n.wait[n.next]) >= n.longest {
		n.longest = -1 // the longest is leaving the history
	}
	n.xs[n.next], n.queue[n.next], n.wait[n.next], n.gone[n.next] = x, q, float32(wait), gone
	n.ref[n.next] = float32(ref)
	if n.ix != nil {
		n.ix.replaced(n.next) // searched with the fresh ones from now on
	}
	n.next = (n.next + 1) % historySize
	n.reindex()
}

// replaced marks ring position i as no longer the situation the index holds there.
func (ix *index) replaced(i int) {
	if i < len(ix.where) {
		if k := ix.where[i]; k >= 0 {
			ix.perm[k] = -1
			ix.where[i] = -1
		}
	}
}

// reindex takes in a finished build, and starts one from a snapshot of the ring once
// rebuildEvery situations have been added since the current index's snapshot.
func (n *neighbours) reindex() {
	n.collect()
	if n.fresh < rebuildEvery || n.building != nil {
		return
	}
	b := n.spare
	if b == nil {
		b = &index{}
	}
	n.spare = nil
	b.xs = append(b.xs[:0], n.xs...)
	b.queue = append(b.queue[:0], n.queue...)
	oldest := 0
	if len(n.xs) == historySize {
		oldest = n.next
	}
	n.since = 0
	done := make(chan *index, 1)
	n.building = done
	go func() {
		b.build(oldest)
		done <- b
	}()
}

// collect takes in the build under way if it is done: the situations added since its snapshot
// become the fresh ones, and those they replaced are marked gone from its leaves.
func (n *neighbours) collect() {
	if n.building == nil {
		return
	}
	var b *index
	select {
	case b = <-n.building:
	default:
		return
	}
	n.building = nil
	size := len(n.xs)
	for k := 1; k <= min(n.since, size); k++ {
		i := size - k
		if size == historySize {
			i = (n.next - k + historySize) % historySize
		}
		b.replaced(i)
	}
	n.spare, n.ix = n.ix, b
	n.fresh = n.since
}

// build makes the index of its snapshot, whose oldest situation is at ring position oldest.
// The older situations and the recent ones get leaves of their own: a leaf of older ones stays
// so (the recent ones are the newest), and is skipped at the k-th nearest of all.
func (ix *index) build(oldest int) {
	size := len(ix.xs)
	ix.perm = ix.perm[:0]
	for k := range size {
		ix.perm = append(ix.perm, int32((oldest+k)%size))
	}
	ix.keys = slices.Grow(ix.keys[:0], size)[:size] // each split writes its own before it reads them
	ix.nodes = ix.nodes[:0]
	older := max(size-recentSize, 0)
	ix.roots = [2]int32{-1, -1}
	if older > 0 {
		ix.roots[0] = ix.split(0, older)
	}
	ix.roots[1] = ix.split(older, size)
	ix.lx = ix.lx[:0]
	ix.where = slices.Grow(ix.where[:0], size)[:size] // every position is in perm once
	for k, i := range ix.perm {
		ix.where[i] = int32(k)
		ix.lx = append(ix.lx, ix.xs[i])
	}
}

// split makes a tree of perm[from:to] and returns its root: while there are more than leafSize,
// it halves them at the median of the feature whose values vary most (by variance: a range
// would follow outliers).
// Every node's box is fitted to its situations.
func (ix *index) split(from, to int) int32 {
	id := int32(len(ix.nodes))
	ix.nodes = append(ix.nodes, node{from: int32(from), to: int32(to), left: -1, right: -1})
	if to-from <= leafSize {
		nd := &ix.nodes[id]
		nd.lo, nd.hi = ix.xs[ix.perm[from]], ix.xs[ix.perm[from]]
		nd.queue = ix.queue[ix.perm[from]]
		for _, i := range ix.perm[from+1 : to] {
			x := &ix.xs[i]
			for f := range nFeatures {
				nd.lo[f], nd.hi[f] = min(nd.lo[f], x[f]), max(nd.hi[f], x[f])
			}
			if ix.queue[i] != nd.queue {
				nd.queue = mixedQueues
			}
		}
		return id
	}
	// The spread is read off an even sample of at most about splitSample situations: the
	// feature it picks only steers the search, never what it finds.
	var sum, sq [nFeatures]float64
	stride := max((to-from)/splitSample, 1)
	cnt := 0.0
	for k := from; k < to; k += stride {
		x := &ix.xs[ix.perm[k]]
		for g := range nFeatures {
			v := float64(x[g])
			sum[g] += v
			sq[g] += v * v
		}
		cnt++
	}
	f, spread := 0, -1.0
	for g := range nFeatures {
		if v := sq[g] - sum[g]*sum[g]/cnt; v > spread {
			f, spread = g, v
		}
	}
	keys := ix.keys[from:to]
	for k, i := range ix.perm[from:to] {
		keys[k] = ix.xs[i][f]
	}
	mid := (from + to) / 2
	selectKeyed(keys, ix.perm[from:to], mid-from)
	m := keys[mid-from]
	left := ix.split(from, mid)
	right := ix.split(mid, to)
	nd := &ix.nodes[id]
	nd.left, nd.right, nd.dim, nd.at = left, right, int8(f), m
	l, r := &ix.nodes[left], &ix.nodes[right]
	for g := range nFeatures {
		nd.lo[g], nd.hi[g] = min(l.lo[g], r.lo[g]), max(l.hi[g], r.hi[g])
	}
	nd.queue = l.queue
	if r.queue != l.queue {
		nd.queue = mixedQueues
	}
	return id
}

// selectKeyed reorders keys, and perm alike, so that keys[k] is where sorting would put it,
// with no greater key before it and no smaller after it.
func selectKeyed(keys []float32, perm []int32, k int) {
	lo, hi := 0, len(keys)-1
	for lo < hi {
		p := keys[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for keys[i] < p {
				i++
			}
			for keys[j] > p {
				j--
			}
			if i <= j {
				keys[i], keys[j] = keys[j], keys[i]
				perm[i], perm[j] = perm[j], perm[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}

// longestWait is the longest wait among the remembered requests that started (0 for none).
func (n *neighbours) longestWait() float64 {
	if n.longest < 0 {
		n.longest = 0
		for i, w := range n.wait {
			if !n.gone[i] {
				n.longest = max(n.longest, float64(w))
			}
		}
	}
	return n.longest
}

// boxWithin reports whether the box lo..hi may hold a situation within limit of x: false
// once d plus the distance from x to the box, a lower bound of theirs, exceeds it.
func boxWithin(x, lo, hi *[nFeatures]float32, d float32, limit float32) bool {
	for f := range 6 {
		d += relu(lo[f]-x[f]) + relu(x[f]-hi[f])
	}
	if d > limit {
		return false
	}
	for f := 6; f < nFeatures; f++ {
		d += relu(lo[f]-x[f]) + relu(x[f]-hi[f])
	}
	return d <= limit
}

// relu is max(v, 0) without a branch. Of lo-x and x-hi at most one is positive, so their
// relus add up to exactly max(lo-x, x-hi, 0).
func relu(v float32) float32 {
	b := math.Float32bits(v)
	return math.Float32frombits(b &^ uint32(int32(b)>>31))
}

// distanceWithin is d0 plus the distance from x to y, and false as soon as it exceeds limit.
// abs is |v| without a branch: a sign the processor cannot predict costs more than the rest of
// a distance.
func abs(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

func distanceWithin(x, y *[nFeatures]float32, d0, limit float32) (float32, bool) {
	d := d0 + abs(x[0]-y[0]) + abs(x[1]-y[1]) + abs(x[2]-y[2]) + abs(x[3]-y[3])
	if d > limit {
		return d, false
	}
	d += abs(x[4]-y[4]) + abs(x[5]-y[5]) + abs(x[6]-y[6]) + abs(x[7]-y[7])
	if d > limit {
		return d, false
	}
	d += abs(x[8]-y[8]) + abs(x[9]-y[9]) + abs(x[10]-y[10]) + abs(x[11]-y[11]) + abs(x[12]-y[12])
	return d, d <= limit
}

// nearest keeps the k candidates smallest by (distance, index) offered so far, as a max-heap.
type nearest struct {
	c []cand
	k int
}

func candLess(a, b cand) bool { return a.d < b.d || (a.d == b.d && a.i < b.i) }

// worst is the distance a candidate must not exceed to join (+Inf while there is room).
func (h *nearest) worst() float32 {
	if len(h.c) < h.k {
		return float32(math.Inf(1))
	}
	return h.c[0].d
}

func (h *nearest) offer(cd cand) {
	if len(h.c) < h.k {
		h.c = append(h.c, cd)
		for i := len(h.c) - 1; i > 0; {
			parent := (i - 1) / 2
			if !candLess(h.c[parent], h.c[i]) {
				break
			}
			h.c[i], h.c[parent] = h.c[parent], h.c[i]
			i = parent
		}
		return
	}
	if !candLess(cd, h.c[0]) {
		return
	}
	h.c[0] = cd
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(h.c) {
			return
		}
		m := l
		if r := l + 1; r < len(h.c) && candLess(h.c[l], h.c[r]) {
			m = r
		}
		if !candLess(h.c[i], h.c[m]) {
			return
		}
		h.c[i], h.c[m] = h.c[m], h.c[i]
		i = m
	}
}

// distanceUpTo is the distance from x to y, summed feature by feature, and false as soon as
// it exceeds limit.
func distanceUpTo(x, y *[nFeatures]float32, limit float32) (float32, bool) {
	var d float32
	for f := range 4 {
		d += abs(x[f] - y[f])
	}
	if d > limit {
		return d, false
	}
	for f := 4; f < 8; f++ {
		d += abs(x[f] - y[f])
	}
	if d > limit {
		return d, false
	}
	for f := 8; f < nFeatures; f++ {
		d += abs(x[f] - y[f])
	}
	return d, true
}

// query finds the k situations nearest to x among the remembered ones and returns the
// outcomes of those among the k nearest of the recentSize most recent that started (for the
// median), and the fates of the k nearest of all plus the requests still waiting in ahead (every
// stride-th of those estimated by Predict; at most pendingCount, the nearest) no farther away
// than the k-th of them, censored at their age at now (for the bound). Both come unsorted, each
// with the reference wait of its situation.
func (n *neighbours) query(x [nFeatures]float32, queue string, ahead []Pending, stride int, now int64) (recent, obs []outcome) {
	if len(n.xs) == 0 {
		return nil, nil
	}
	q, ok := n.queues[queue]
	if !ok {
		q = -1
		if len(n.queues) >= maxQueueIDs {
			q = maxQueueIDs
		}
	}
	// The oldest remembered situation is at next once the ring is full; the recent ones are the
	// last recentSize written.
	oldest := 0
	if len(n.xs) == historySize {
		oldest = n.next
	}
	// The k nearest of all and of the recent ones, block by block from the block whose box is
	// nearest; a block whose box is farther than the k-th nearest so far of the sets it could
	// join is skipped, and so is a situation as soon as its partial distance is.
	n.prev = append(append(n.prev[:0], n.cand...), n.rcand...)
	all, rec := nearest{c: n.cand[:0], k: neighbourCount}, nearest{c: n.rcand[:0], k: neighbourCount}
	size := len(n.xs)
	first := size - recentSize // rank (by age) of the oldest recent situation
	isRecent := func(i int) bool {
		r := i - oldest
		if r < 0 {
			r += size
		}
		return r >= first
	}
	n.stamp++
	if len(n.seen) < size {
		n.seen = append(n.seen, make([]uint32, size-len(n.seen))...)
	}
	// visit offers ring position i, whose situation is y, to the sets it could join.
	visit := func(i int, y *[nFeatures]float32) {
		if n.seen[i] == n.stamp {
			return
		}
		n.seen[i] = n.stamp
		var d0 float32
		if n.queue[i] != q {
			d0 = queuePenalty
		}
		recent := isRecent(i)
		limit := all.worst()
		if recent {
			limit = rec.worst() // never below all.worst: the recent are among all
		}
		d, ok := distanceWithin(&x, y, d0, limit)
		if !ok {
			return
		}
		cd := cand{d, int32(i)}
		all.offer(cd)
		if recent {
			rec.offer(cd)
		}
	}
	// The last query's neighbours first: requests come in runs of similar ones, so these are
	// near, and the sets start out with a distance to beat.
	for _, cd := range n.prev {
		if int(cd.i) < size {
			visit(int(cd.i), &n.xs[cd.i])
		}
	}
	// The situations added since the index was built: the most recent, written just before
	// next (the ring may have wrapped).
	n.collect()
	ix := n.ix
	fresh := min(n.fresh, size)
	if ix == nil {
		fresh = size // no index yet
	}
	for k := 1; k <= fresh; k++ {
		i := len(n.xs) - k
		if size == historySize {
			i = (n.next - k + historySize) % historySize
		}
		visit(i, &n.xs[i])
	}
	// A node's box must not be farther than the k-th nearest so far of the sets its situations
	// could join (plus a margin: the box's distance is summed in another order than a
	// situation's, and rounding must not skip a neighbour); a node whose situations are all in
	// another queue is that much farther. The nearer child is searched first.
	var roots [2]int32
	if ix != nil {
		roots = [2]int32{ix.roots[1], ix.roots[0]}
	} else {
		roots = [2]int32{-1, -1}
	}
	for t, root := range roots {
		older := t == 1
		if root < 0 {
			continue
		}
		stack := append(n.stack[:0], root)
		for len(stack) > 0 {
			id := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			limit := rec.worst()
			if older {
				limit = all.worst()
			}
			nd := &ix.nodes[id]
			var d0 float32
			if nd.queue != mixedQueues && nd.queue != q {
				d0 = queuePenalty
			}
			if !boxWithin(&x, &nd.lo, &nd.hi, d0, limit*(1+1e-5)+1e-5) {
				continue
			}
			if nd.left < 0 {
				// visit, written out: this is where nearly all the situations are met.
				for k := nd.from; k < nd.to; k++ {
					i := ix.perm[k]
					if i < 0 || n.seen[i] == n.stamp {
						continue
					}
					n.seen[i] = n.stamp
					var d0 float32
					if n.queue[i] != q {
						d0 = queuePenalty
					}
					r := int(i) - oldest
					if r < 0 {
						r += size
					}
					recent := r >= first
					lim := all.worst()
					if recent {
						lim = rec.worst()
					}
					d, ok := distanceWithin(&x, &ix.lx[k], d0, lim)
					if !ok {
						continue
					}
					cd := cand{d, i}
					all.offer(cd)
					if recent {
						rec.offer(cd)
					}
				}
				continue
			}
			if x[nd.dim] < nd.at {
				stack = append(stack, nd.right, nd.left)
			} else {
				stack = append(stack, nd.left, nd.right)
			}
		}
		n.stack = stack
	}
	c, cr := all.c, rec.c
	recent, obs = n.recent[:0], n.obs[:0]
	for _, cd := range cr {
		if !n.gone[cd.i] {
			recent = append(recent, outcome{float64(n.wait[cd.i]), float64(n.ref[cd.i]), started})
		}
	}
	radius := float32(0)
	for _, cd := range c {
		radius = max(radius, cd.d)
		kind := started
		if n.gone[cd.i] {
			kind = left
		}
		obs = append(obs, outcome{float64(n.wait[cd.i]), float64(n.ref[cd.i]), kind})
	}
	pc := n.pcand[:0]
	for i := 0; i < len(ahead); i += stride {
		pd := &ahead[i]
		if !pd.Estimate.valid {
			continue
		}
		d, ok := distanceUpTo(&x, &pd.Estimate.x, radius)
		if !ok {
			continue
		}
		if pd.Queue != queue {
			d += queuePenalty
		}
		if d <= radius {
			pc = append(pc, cand{d, int32(i)})
		}
	}
	if len(pc) > pendingCount {
		selectSmallest(pc, pendingCount)
		pc = pc[:pendingCount]
	}
	for _, cd := range pc {
		pd := &ahead[cd.i]
		age := float64(max(now-pd.Submit.UnixNano(), 0)) * 1e-9
		obs = append(obs, outcome{age, reference(&pd.Estimate.Situation), waiting})
	}
	n.pcand = pc
	n.cand, n.rcand, n.recent, n.obs = c, cr, recent, obs
	return recent, obs
}

// sortOutcomes orders outcomes by time; at one moment starts come first, then departures, then
// the censored. There are at most a few dozen: an insertion sort, written out, is the quickest.
func sortOutcomes(obs []outcome) {
	for i := 1; i < len(obs); i++ {
		o := obs[i]
		j := i
		for ; j > 0 && (obs[j-1].t > o.t || (obs[j-1].t == o.t && obs[j-1].kind > o.kind)); j-- {
			obs[j] = obs[j-1]
		}
		obs[j] = o
	}
}

// step is a point of a bound's value curve: a bound of t seconds would have covered a share
// cif of similar requests (started within it) and seen a share gone of them leave the queue
// before it ran out.
type step struct{ t, cif, gone float64 }

// startCurve estimates, from the fates in obs (sorted by time), the share of such requests that
// have started, and the share that have left the queue without starting, by each time one of
// them did: cumulative incidences with starting and leaving as competing events and still-waiting
// requests censored at their age (Aalen–Johansen). Without departures or waiting requests cif
// is the empirical distribution of the waits.
func startCurve(obs []outcome, curve []step) []step {
	curve = curve[:0]
	atRisk := float64(len(obs))
	surv, cif, gone := 1.0, 0.0, 0.0
	for i := 0; i < len(obs) && atRisk > 0; {
		t := obs[i].t
		var starts, leaves, censored float64
		for ; i < len(obs) && obs[i].t == t; i++ {
			switch obs[i].kind {
			case started:
				starts++
			case left:
				leaves++
			default:
				censored++
			}
		}
		if starts+leaves > 0 {
			cif += surv * starts / atRisk
			gone += surv * leaves / atRisk
			curve = append(curve, step{t, cif, gone})
			surv *= 1 - (starts+leaves)/atRisk
		}
		atRisk -= starts + leaves + censored
	}
	return curve
}

// reach is the share that ever starts according to the curve.
func reach(curve []step) float64 {
	if len(curve) == 0 {
		return 0
	}
	return curve[len(curve)-1].cif
}

// gone is the share that leaves the queue without starting according to the curve.
func gone(curve []step) float64 {
	if len(curve) == 0 {
		return 0
	}
	return curve[len(curve)-1].gone
}

// selectSmallest moves the k smallest candidates (by distance, then age) to c[:k].
func selectSmallest(c []cand, k int) {
	lo, hi := 0, len(c)-1
	less := func(a, b cand) bool { return a.d < b.d || (a.d == b.d && a.i < b.i) }
	for lo < hi {
		p := c[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for less(c[i], p) {
				i++
			}
			for less(p, c[j]) {
				j--
			}
			if i <= j {
				c[i], c[j] = c[j], c[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// bestBound is the bound that buys the most coverage for its length: the time b on the curve
// maximising cif(b) + coverage·gone(b) - lambda*ln(1 + b/1 min), or 0 when nothing is worth its
// cost. A request that leaves the queue within its bound is neither hit nor miss; leaving it
// out of the count is worth as much to the share of hits as coverage hits are, which is why
// departures within the bound count at that rate. Extending a bound by a factor costs the same
// everywhere, so a request whose wait is predictable gets a bound that covers nearly all
// similar requests, and one whose wait is spread over orders of magnitude gets a shorter bound
// than its 90th percentile: overall this gives the shortest bounds (in ratio) for a given
// share of requests covered.
func bestBound(curve []step, lambda, coverage float64) (best, value float64) {
	for _, s := range curve {
		if v := s.cif + coverage*s.gone - lambda*math.Log1p(s.t/60); v > value {
			best, value = s.t, v
		}
	}
	return best, value
}
