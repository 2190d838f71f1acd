package predict

// runtimes learns how long leases really run: per user and overall, the ratio of run time to
// requested time; and, for leases that request no duration, the run times themselves.
type runtimes struct {
	// The last user looked up, since leases of one user tend to come together.
	lastUser  string
	lastRatio *window

	ratio     *window
	userRatio map[string]*window
	run       *window
	queueRun  map[string]*window
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
	r.userRatio = map[string]*window{}
	r.run = newWindow(runWindow)
	r.queueRun = map[string]*window{}
}

func (r *runtimes) observe(user, queue string, requested, ran float64) {
	if ran < 0 {
		return
	}
	if requested > 0 {
		x := ran / requested
		r.ratio.add(x)
		w := r.userRatio[user]
		if w == nil {
			w = newWindow(userRatioWindow)
			r.userRatio[user] = w
		}
		w.add(x)
		r.lastRatio = nil
		return
	}
	r.run.add(ran)
	w := r.queueRun[queue]
	if w == nil {
		w = newWindow(runWindow)
		r.queueRun[queue] = w
	}
	w.add(ran)
}

// remaining is the expected time left for a lease that has run elapsed seconds: the median
// remaining life among past leases that lasted at least as long.
func (r *runtimes) remaining(user, queue string, requested, elapsed float64) float64 {
	if requested > 0 {
		x := elapsed / requested
		if x >= 1 {
			return 0 // past its limit: ends any moment
		}
		w := r.lastRatio
		if user != r.lastUser || w == nil {
			w = r.userRatio[user]
			r.lastUser, r.lastRatio = user, w
		}
		var s []float64
		if w != nil && len(w.vals) >= minUserRatios {
			s = w.view()
		} else {
			s = r.ratio.view()
		}
		if len(s) == 0 {
			return (1 - x) * requested
		}
		if m, ok := residualMedian(s, x); ok {
			return min(m, 1-x) * requested
		}
		return (1 - x) * requested / 2 // it already ran longer than any like it
	}
	s := r.run.view()
	if w := r.queueRun[queue]; w != nil && w.len() >= minQueueRuns {
		s = w.view()
	}
	if m, ok := residualMedian(s, elapsed); ok {
		return m
	}
	if elapsed > 0 {
		return elapsed // longer than anything seen: it is likely to last as long again
	}
	return 3600 // nothing known at all
}
