package predict

import (
	"math"
	"slices"
	"time"
)

// neighbours maps a request's situation to the waits of the most similar recent requests.
//
// A situation is a short vector: the three simulated starts, the user's recent waits, the
// requested duration and size, all on a log scale (a minute against two minutes counts as much
// as an hour against two), plus the queue. The simulation knows the pool but not the
// scheduler's priorities, reservations or fragmentation; the neighbours' real waits carry those.
type neighbours struct {
	xs     [][nFeatures]float32
	queue  []int32
	wait   []float32
	next   int
	queues map[string]int32

	// scratch for one query
	cand []cand
	vals []float64
}

type cand struct {
	d float32
	i int32
}

const (
	nFeatures = 11

	neighbourCount = 32   // k: waits a prediction rests on
	historySize    = 2048 // recent situations searched
	queuePenalty   = 1.0  // distance between different queues
)

func (n *neighbours) init() {
	n.queues = map[string]int32{}
}

func (n *neighbours) queueID(q string) int32 {
	id, ok := n.queues[q]
	if !ok {
		id = int32(len(n.queues))
		n.queues[q] = id
	}
	return id
}

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
	}
}

func (n *neighbours) add(x [nFeatures]float32, queue string, wait float64) {
	q := n.queueID(queue)
	if len(n.xs) < historySize {
		n.xs = append(n.xs, x)
		n.queue = append(n.queue, q)
		n.wait = append(n.wait, float32(wait))
		return
	}
	n.xs[n.next], n.queue[n.next], n.wait[n.next] = x, q, float32(wait)
	n.next = (n.next + 1) % historySize
}

// query returns the waits of the k nearest situations in ascending order.
func (n *neighbours) query(x [nFeatures]float32, queue string) []float64 {
	if len(n.xs) == 0 {
		return nil
	}
	q, ok := n.queues[queue]
	if !ok {
		q = -1
	}
	c := n.cand[:0]
	for i := range n.xs {
		y := &n.xs[i]
		var d float32
		for f := 0; f < nFeatures; f++ {
			v := x[f] - y[f]
			if v < 0 {
				v = -v
			}
			d += v
		}
		if n.queue[i] != q {
			d += queuePenalty
		}
		c = append(c, cand{d, int32(i)})
	}
	k := min(neighbourCount, len(c))
	selectSmallest(c, k)
	vals := n.vals[:0]
	for _, cd := range c[:k] {
		vals = append(vals, float64(n.wait[cd.i]))
	}
	slices.Sort(vals)
	n.cand, n.vals = c, vals
	return vals
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
