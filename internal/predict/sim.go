package predict

import "time"

// endEvent is a simulated release of gpus at t seconds from now; queued marks the end of a
// request that the simulation started, as opposed to a lease running now.
type endEvent struct {
	t, gpus float64
	queued  bool
}

// simScratch holds buffers reused across predictions (under the predictor's lock).
type simScratch struct {
	ends []endEvent // the running leases' expected ends
	heap []endEvent // the earliest of them, and the simulated requests' ends
	// horizon is how far ahead (seconds) the running ends that the next simulation will need
	// probably lie: twice what the last one needed.
	horizon float64
	times   []float64 // free-GPU profile of the first-come-first-served schedule
	levels  []float64
}

// simResult is when a request could start, in seconds from now, three ways.
type simResult struct {
	alone    float64 // on the first GPUs that free up, ignoring the queue
	backfill float64 // in the first hole of the queue's schedule long enough for its run time
	queued   float64 // behind every request ahead, first come first served
}

const epsGPU = 1e-9

// maxSimQueue is how many requests ahead the simulation starts one by one.
const maxSimQueue = 256

// seconds is d.Seconds() without its care for huge values, which shows with 10,000 leases.
func seconds(d time.Duration) float64 { return float64(d) * 1e-9 }

// simulate plays the pool forward from st.Now. Running leases (st.Running, or the tracked ones
// when it is nil) end at their expected end;
// requests ahead start in order and run for their expected run time.
func (p *Predictor) simulate(req Request, st State) simResult {
	var res simResult
	// The running leases' expected ends, split on the way: those within the horizon that the
	// last prediction needed (doubled) go to early, the others to rest. Only the earliest ends
	// can matter: once they have freed enough GPUs for every request ahead and this one, all
	// have started, so the simulation orders early alone and dips into rest only when short.
	ends := endSplit{horizon: p.sc.horizon, early: p.sc.heap[:0], rest: p.sc.ends[:0]}
	if st.Running == nil {
		p.trackedEnds(&ends, st.Now.UnixNano())
	} else {
		now := st.Now.UnixNano()
		for i := range st.Running {
			l := &st.Running[i]
			elapsed := max(float64(now-l.Start.UnixNano())*1e-9, 0)
			ends.add(p.rt.remaining(l.User, l.Queue, seconds(l.Requested), elapsed), max(l.GPUs, 0))
		}
	}
	p.sc.ends = ends.rest[:0]
	used := ends.earlyGPUs + ends.restGPUs
	capacity := st.Capacity
	if capacity <= 0 {
		capacity = p.cfg.Capacity
	}
	if capacity <= 0 {
		p.seenCap = max(p.seenCap, used, req.GPUs)
		capacity = p.seenCap
	}
	free := capacity - used
	need := min(max(req.GPUs, 0), capacity)

	demand := need - free
	simulated := min(len(st.Queue), maxSimQueue)
	for i := range simulated {
		demand += min(max(st.Queue[i].GPUs, 0), capacity)
	}
	if short := demand + 1 - ends.earlyGPUs; short > 0 && len(ends.rest) > 0 {
		m := earliest(ends.rest, short) // a selection: cheaper than ordering them all
		ends.early = append(ends.early, ends.rest[:m]...)
		ends.rest = ends.rest[m:]
	}
	heap, rest := ends.early, ends.rest

	// First come first served, logging the free GPUs after each moment something changes.
	// Alone falls out on the way: the first time the running leases alone have freed enough.
	// The first-come start cannot come sooner, since a simulated request frees no more than it took.
	heapify(heap)
	deficit := need - free
	aloneDone := deficit <= epsGPU
	times, levels := append(p.sc.times[:0], 0), append(p.sc.levels[:0], free)
	t, f := 0.0, free
	// The requests past the first maxSimQueue are not simulated one by one: their work (GPUs
	// times expected run time) delays this request by as long as the whole pool takes to do it.
	var tail float64
	for i := simulated; i < len(st.Queue); i++ {
		q := &st.Queue[i]
		g := min(max(q.GPUs, 0), capacity)
		run := float64(q.Estimate.run)
		if !q.Estimate.valid {
			run = p.rt.remaining(q.User, q.Queue, q.Requested.Seconds(), 0)
		}
		tail += g * run
	}
	// Each request ahead in turn, then this one (i == simulated), starts once enough GPUs are
	// free; every moment the free GPUs change is logged (the last entry is overwritten when the
	// moment is the same).
	var lastStart float64
	for i := 0; i <= simulated; i++ {
		g, run := need, 0.0
		if i < simulated {
			q := &st.Queue[i]
			g = min(max(q.GPUs, 0), capacity)
			run = float64(q.Estimate.run)
			if !q.Estimate.valid {
				run = p.rt.remaining(q.User, q.Queue, q.Requested.Seconds(), 0)
			}
		} else {
			lastStart = t
		}
		for f+epsGPU < g {
			if len(heap) == 0 && len(rest) > 0 {
				heap, rest = append(heap, rest...), nil
				heapify(heap)
			}
			if len(heap) == 0 {
				f = capacity // nothing left to wait for
				break
			}
			var e endEvent
			e, heap = pop(heap)
			t = max(t, e.t)
			f += e.gpus
			if !e.queued && !aloneDone {
				deficit -= e.gpus
				if deficit <= epsGPU {
					res.alone, aloneDone = e.t, true
				}
			}
			if n := len(times) - 1; times[n] == t {
				levels[n] = f
			} else {
				times, levels = append(times, t), append(levels, f)
			}
		}
		f -= g
		if i == simulated {
			break
		}
		if n := len(times) - 1; times[n] == t {
			levels[n] = f
		} else {
			times, levels = append(times, t), append(levels, f)
		}
		heap = push(heap, endEvent{t + run, g, true})
	}
	if !aloneDone {
		res.alone = t
	}
	res.queued = t
	if tail > 0 && capacity > 0 {
		res.queued += tail / capacity
	}
	p.sc.heap, p.sc.times, p.sc.levels = heap[:0], times, levels
	if res.queued > 0 {
		p.sc.horizon = 2*res.queued + 60
	}

	// Backfill: the earliest logged moment from which enough GPUs stay free for the request's
	// expected run time. After the first-come start nothing else starts, so the profile from
	// there on only rises and the check may stop at the log's end.
	res.backfill = res.queued
	run := p.rt.remaining(req.User, req.Queue, req.Requested.Seconds(), 0)
	end := res.queued
	if tail > 0 { // past the last simulated start the requests not simulated fill the holes
		end = lastStart
	}
	for i := 0; i < len(times) && times[i] < end; i++ {
		if levels[i]+epsGPU < need {
			continue
		}
		ok := true
		for j := i + 1; j < len(times) && times[j] < times[i]+run; j++ {
			if levels[j]+epsGPU < need {
				ok, i = false, j
				break
			}
		}
		if ok {
			res.backfill = times[i]
			break
		}
	}
	return res
}

// endSplit collects running ends: those within horizon seconds in early, the others in rest.
type endSplit struct {
	horizon             float64
	early, rest         []endEvent
	earlyGPUs, restGPUs float64
}

func (s *endSplit) add(t, gpus float64) {
	if t <= s.horizon {
		s.early = append(s.early, endEvent{t, gpus, false})
		s.earlyGPUs += gpus
		return
	}
	s.rest = append(s.rest, endEvent{t, gpus, false})
	s.restGPUs += gpus
}

// earliest reorders e so that e[:m] holds the earliest ends whose GPUs add up to at least
// gpus (all of e when they do not), every one of them no later than any in e[m:], and returns m.
// It is a quickselect weighted by GPUs: linear on average.
func earliest(e []endEvent, gpus float64) int {
	lo, hi := 0, len(e)
	for hi-lo > 16 {
		a, b, c := e[lo].t, e[(lo+hi)/2].t, e[hi-1].t
		pivot := max(min(a, b), min(max(a, b), c)) // median of three
		// Three-way partition of e[lo:hi]: below pivot, equal, above.
		lt, i, gt := lo, lo, hi
		var below, equal float64
		for i < gt {
			switch x := e[i].t; {
			case x < pivot:
				below += e[i].gpus
				e[lt], e[i] = e[i], e[lt]
				lt++
				i++
			case x > pivot:
				gt--
				e[i], e[gt] = e[gt], e[i]
			default:
				equal += e[i].gpus
				i++
			}
		}
		switch {
		case below >= gpus:
			hi = lt
		case below+equal >= gpus:
			return gt
		default:
			gpus -= below + equal
			lo = gt
		}
	}
	return hi
}

// A binary min-heap on t, written out to keep the hot path free of interface calls.

func heapify(h []endEvent) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(h, i)
	}
}

func down(h []endEvent, i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r].t < h[l].t {
			m = r
		}
		if h[i].t <= h[m].t {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func pop(h []endEvent) (endEvent, []endEvent) {
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	down(h, 0)
	return top, h
}

func push(h []endEvent, e endEvent) []endEvent {
	h = append(h, e)
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent].t <= h[i].t {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	return h
}
