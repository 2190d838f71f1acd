package predict

import "slices"

// qbetsWindow is how many recent waits the QBETS-style baseline reads, per queue.
const qbetsWindow = 1000

// qbetsState is the QBETS-style baseline's memory as a replay sees it: the last n waits per
// queue and of all queues together.
type qbetsState struct {
	n      int
	queues *capped[string, *window]
	all    *window
}

func (s *qbetsState) observe(queue string, wait float64) {
	if s.queues == nil {
		s.queues = newCapped[string, *window](maxQueues)
		s.all = newWindow(s.n)
	}
	w, _ := s.queues.get(queue)
	if w == nil {
		w = newWindow(s.n)
		s.queues.put(queue, w)
	}
	w.add(wait)
	s.all.add(wait)
}

// sample is the window a prediction for queue reads: the queue's own once it holds 30 waits,
// else everyone's (nil before any wait).
func (s *qbetsState) sample(queue string) *window {
	if s.queues == nil {
		return nil
	}
	if w, _ := s.queues.get(queue); w != nil && w.len() >= 30 {
		return w
	}
	return s.all
}

// qbetsJob is where a scored job's outcome fell in the sample its QBETS bound was read from:
// n values, below of them less than the outcome (the wait, or for a job that never started the
// time it had waited when it was censored). The bound (order statistic k, 0-based) reaches the
// outcome exactly when k >= below.
type qbetsJob struct {
	n, below int32
	started  bool
}

// matchQBETS replays the trace's waits through the QBETS-style bound and sets its quantile,
// after the fact, so that its coverage on the jobs from first on is as close as it gets to
// target (under the same right-censoring rule as Score), then measures its tightness there.
// It returns nil when nothing is scored.
func matchQBETS(src source, first int32, n int, target float64) (*Matched, error) {
	o, err := qbetsSamples(src, first, n)
	if err != nil {
		return nil, err
	}
	return o.match(target)
}

// qbetsOutcomes is how many scored jobs' outcomes fell where in the samples their QBETS-style
// bounds were read from: what matching a coverage needs, replayed once. Jobs that fell alike are
// counted together, so that it stays small however long the trace.
type qbetsOutcomes struct {
	src   source
	first int32
	n     int
	jobs  map[qbetsJob]int
}

// qbetsSamples replays the trace's waits through the QBETS-style memory of n waits per queue.
func qbetsSamples(src source, first int32, n int) (*qbetsOutcomes, error) {
	n = cmpOr(n, qbetsWindow)
	jobs := map[qbetsJob]int{}
	err := walk(src, n, func(i int32, j *Job, w *window) {
		if i < first {
			return
		}
		t := censoredAt(j, src.end)
		if j.Started() {
			t = j.Wait()
		}
		qj := qbetsJob{started: j.Started()}
		if w != nil {
			qj.n, qj.below = int32(w.len()), int32(w.below(float64(t)))
		}
		if qj.n == 0 && t <= 0 { // no sample: the bound is 0, which reaches a wait of 0
			qj.below = -1
		}
		jobs[qj]++
	})
	if err != nil {
		return nil, err
	}
	return &qbetsOutcomes{src: src, first: first, n: n, jobs: jobs}, nil
}

// match sets the quantile so that the coverage is as close as it gets to target, and measures
// the tightness there (see matchQBETS).
func (o *qbetsOutcomes) match(target float64) (*Matched, error) {
	n, jobs := o.n, o.jobs
	if len(jobs) == 0 {
		return nil, nil
	}
	ranks := make([]int32, n+1)
	coverage := func(q float64) float64 {
		for k := 1; k <= n; k++ {
			ranks[k] = -2 // not computed yet
		}
		var covered, counted int
		for qj, count := range jobs {
			k := int32(-1)
			if qj.n > 0 {
				if ranks[qj.n] == -2 {
					ranks[qj.n] = int32(binomialUpperRank(int(qj.n), q, 0.95))
				}
				k = ranks[qj.n]
			}
			reaches := k >= qj.below
			switch {
			case qj.started:
				counted += count
				if reaches {
					covered += count
				}
			case !reaches:
				counted += count // censored before the bound: a miss
			}
		}
		if counted == 0 {
			return 1
		}
		return float64(covered) / float64(counted)
	}
	// Coverage only grows with the quantile: bisect for the lowest quantile that reaches the
	// target (above) and the highest that does not (below).
	const lowest, highest = 1e-4, 1 - 1e-4
	lo, hi := lowest, highest
	if coverage(hi) < target {
		lo = hi
	} else if coverage(lo) >= target {
		hi = lo
	}
	for range 40 {
		if hi-lo < 1e-7 {
			break
		}
		mid := (lo + hi) / 2
		if coverage(mid) >= target {
			hi = mid
		} else {
			lo = mid
		}
	}
	tight, err := qbetsTightness(o.src, o.first, n, hi, lo) // one replay for both
	if err != nil {
		return nil, err
	}
	above := Bracket{Quantile: hi, Coverage: coverage(hi), Tightness: tight[0]}
	m := &Matched{Quantile: hi, Coverage: above.Coverage, Tightness: above.Tightness, Above: above, Below: above}
	if lo == hi {
		return m, nil
	}
	below := Bracket{Quantile: lo, Coverage: coverage(lo), Tightness: tight[1]}
	m.Below = below
	// Coverage jumps where many jobs share a sample: the target lies between two quantiles'
	// coverages. The tightness there is read off the line between them.
	if span := above.Coverage - below.Coverage; span > 0 && below.Coverage < target && target < above.Coverage {
		f := (target - below.Coverage) / span
		m.Quantile = below.Quantile + f*(above.Quantile-below.Quantile)
		m.Coverage = target
		m.Tightness = below.Tightness + f*(above.Tightness-below.Tightness)
	}
	return m, nil
}

// qbetsTightness is the QBETS-style bound's tightness at each of the quantiles qs: the median
// of bound / wait over the jobs from first on that started after waiting a minute or more.
func qbetsTightness(src source, first int32, n int, qs ...float64) ([]float64, error) {
	ranks := make([][]int, len(qs))
	ratios := make([][]float64, len(qs))
	for i, q := range qs {
		ranks[i] = make([]int, n+1)
		for k := 1; k <= n; k++ {
			ranks[i][k] = binomialUpperRank(k, q, 0.95)
		}
	}
	err := walk(src, n, func(i int32, j *Job, w *window) {
		if i < first || !j.Started() || j.Wait() < 60 {
			return
		}
		for k := range qs {
			bound := 0.0
			if w != nil && w.len() > 0 {
				bound = w.view()[ranks[k][w.len()]]
			}
			ratios[k] = append(ratios[k], bound/float64(j.Wait()))
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(qs))
	for k := range qs {
		slices.Sort(ratios[k])
		out[k] = median(ratios[k])
	}
	return out, nil
}

// walk replays the trace's starts through a QBETS-style memory of n waits per queue and calls
// at for each job when it is submitted, with the sample its bound is read from.
func walk(src source, n int, at func(job int32, j *Job, w *window)) error {
	s := qbetsState{n: n}
	return play(src, func(ev *event) {
		switch ev.kind {
		case evSubmit:
			at(ev.job, ev.j, s.sample(ev.j.Queue))
		case evStart:
			s.observe(ev.j.Queue, float64(ev.j.Wait()))
		}
	})
}
