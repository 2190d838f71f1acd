package predict

// Leases the predictor tracks (Track, Untrack), each with its expected end kept between
// predictions: a prediction then reads one number per lease instead of looking up the learned
// run times, which matters when a pool runs thousands of leases.
type trackedLeases struct {
	list   []trackedLease // what the simulation reads, kept small
	leases []Lease
	ids    []string
	pos    map[string]int
}

type trackedLease struct {
	start   int64   // Unix nanoseconds
	gpus    float64 // never negative
	end     float64 // expected end, in seconds after the start: end + slope*elapsed ...
	slope   float64
	stable  float64 // ... while the lease has run less than this many seconds
	from    *window // the learned run times it came from (nil: none) ...
	staleAt uint64  // ... which have changed noticeably once from.adds reaches this
}

// staleAfter is how many new run times a window takes in before the expected ends read from it
// are recomputed: one for a user's short window, a sixteenth of a long one.
func staleAfter(w *window) uint64 { return max(uint64(cap(w.vals))/16, 1) }

// Track tells the predictor that a lease has started running in its pool; id must be unique
// among the pool's running leases (tracking an id again replaces the lease). When State.Running
// is nil, Predict uses the tracked leases, keeping each one's expected end between calls
// (recomputed when the lease outlives a past lease like it or the learned run times change
// noticeably), which makes a prediction cheap however many leases run. Untrack it when it ends.
func (p *Predictor) Track(id string, l Lease) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run.pos == nil {
		p.run.pos = map[string]int{}
	}
	tl := trackedLease{start: l.Start.UnixNano(), gpus: max(l.GPUs, 0), stable: -1}
	if i, ok := p.run.pos[id]; ok {
		p.run.list[i], p.run.leases[i] = tl, l
		return
	}
	p.run.pos[id] = len(p.run.list)
	p.run.list = append(p.run.list, tl)
	p.run.leases = append(p.run.leases, l)
	p.run.ids = append(p.run.ids, id)
}

// Untrack tells the predictor that the lease id stopped running. Unknown ids are ignored.
func (p *Predictor) Untrack(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, ok := p.run.pos[id]
	if !ok {
		return
	}
	last := len(p.run.list) - 1
	p.run.list[i], p.run.leases[i], p.run.ids[i] = p.run.list[last], p.run.leases[last], p.run.ids[last]
	p.run.pos[p.run.ids[i]] = i
	p.run.list[last], p.run.leases[last], p.run.ids[last] = trackedLease{}, Lease{}, ""
	p.run.list, p.run.leases, p.run.ids = p.run.list[:last], p.run.leases[:last], p.run.ids[:last]
	delete(p.run.pos, id)
}

// trackedEnds adds the tracked leases' expected ends (seconds from now) to ends.
func (p *Predictor) trackedEnds(ends *endSplit, now int64) {
	for i := range p.run.list {
		tl := &p.run.list[i]
		elapsed := max(float64(now-tl.start)*1e-9, 0)
		if elapsed >= tl.stable || (tl.from != nil && tl.from.adds >= tl.staleAt) {
			l := &p.run.leases[i]
			tl.end, tl.slope, tl.stable, tl.from = p.rt.expect(l.User, l.Queue, seconds(l.Requested), elapsed)
			from := tl.from
			if from != nil {
				tl.staleAt = from.adds + staleAfter(from)
			}
		}
		ends.add(max(tl.end+(tl.slope-1)*elapsed, 0), tl.gpus)
	}
}
