package predict

import "math"

// runtimes learns how long leases really run: per user and overall, the ratio of run time to
// requested time; and, for leases that request no duration, the run times themselves.
type runtimes struct {
	// The last user looked up, since leases of one user tend to come together.
	lastUser  string
	lastRatio *window

	ratio     *window
	userRatio *capped[string, *window]
	run       *window
	queueRun  *capped[string, *window]
}

const (
	ratioWindow     = 1024
	userRatioWindow = 32
	minUserRatios   = 4
	runWindow       = 1024
	minQueueRuns    = 32
)

func (r *runtimes) init() {
	r.ratio = newWindow(ratioWindow)
	r.userRatio = newCapped[string, *window](maxUsers)
	r.run = newWindow(runWindow)
	r.queueRun = newCapped[string, *window](maxQueues)
}

func (r *runtimes) observe(user, queue string, requested, ran float64) {
	if ran < 0 {
		return
	}
	if requested > 0 {
		x := ran / requested
		r.ratio.add(x)
		w, _ := r.userRatio.get(user)
		if w == nil {
			w = newWindow(userRatioWindow)
			r.userRatio.put(user, w)
		}
		w.add(x)
		r.lastRatio = nil
		return
	}
	r.run.add(ran)
	w, _ := r.queueRun.get(queue)
	if w == nil {
		w = newWindow(runWindow)
		r.queueRun.put(queue, w)
	}
	w.add(ran)
}

// remaining is the expected time left for a lease that has run elapsed seconds: the median
// remaining life among past leases that lasted at least as long.
func (r *runtimes) remaining(user, queue string, requested, elapsed float64) float64 {
	end, slope, _, _ := r.expect(user, queue, requested, elapsed)
	return end + (slope-1)*elapsed
}

// expect gives the expected end, counted from the lease's start, in the form a cache can keep:
// end + slope*elapsed holds while the lease has run less than stable seconds (it only moves
// when the lease outlives another past lease) and the window it was read from (from; nil when
// none) does not change.
func (r *runtimes) expect(user, queue string, requested, elapsed float64) (end, slope, stable float64, from *window) {
	if requested > 0 {
		if elapsed >= requested {
			return 0, 1, inf, nil // past its limit: ends any moment
		}
		w := r.lastRatio
		if user != r.lastUser || w == nil {
			w, _ = r.userRatio.get(user)
			r.lastUser, r.lastRatio = user, w
		}
		if w == nil || len(w.vals) < minUserRatios {
			w = r.ratio
		}
		s := w.view()
		if len(s) == 0 {
			return requested, 0, requested, w
		}
		if mid, next, ok := residual(s, elapsed/requested); ok {
			return min(mid, 1) * requested, 0, next * requested, w
		}
		return requested / 2, 0.5, requested, w // it already ran longer than any like it: halfway to its limit
	}
	w := r.run
	if q, _ := r.queueRun.get(queue); q != nil && q.len() >= minQueueRuns {
		w = q
	}
	if mid, next, ok := residual(w.view(), elapsed); ok {
		return mid, 0, next, w
	}
	if elapsed > 0 {
		return 0, 2, inf, w // longer than anything seen: it is likely to last as long again
	}
	return 3600, 0, 0, w // nothing known at all
}

var inf = math.Inf(1)
