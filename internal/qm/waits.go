package qm

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"strings"
	"time"
)

// WaitEstimate is a predicted queue wait.
type WaitEstimate struct {
	Median time.Duration
	P90    time.Duration
	// Unknown is set when the service cannot tell: the scheduler places leases and reports no capacity.
	Unknown bool
	// NoNodes is set (with Unknown) when the scheduler reports its nodes and none of the class
	// takes jobs now (drained, down, cordoned or reserved): a request waits until one does.
	NoNodes bool
	// SchedulerAway is set (with Unknown) while the scheduler does not answer (a job could not
	// reach it, or its nodes cannot be read): what it said of its GPUs before may no longer hold,
	// and nothing is handed to it until it answers.
	SchedulerAway bool
	// MayNotStart is set when too many similar requests never started for a bound to be worth
	// giving; Horizon is then the longest wait the predictor has seen.
	MayNotStart bool
	Horizon     time.Duration
}

// rememberWait has the wait predictor estimate a workspace lease's wait before it starts, as if
// it were queued, and keep the estimate with the lease: when the lease starts, the predictor
// learns from its wait, however short. Without it the predictor would learn only from leases
// that queued, and expect a wait on a free cluster. Call it outside any transaction.
func (s *Service) rememberWait(ctx context.Context, l *Lease) {
	if s.Waits == nil || l.Kind != KindWorkspace || l.CPUOnly() { // a CPU-only lease waits for no GPU
		return
	}
	if _, err := s.predictWithModel(ctx, WaitRequest{Lease: l.ID, Class: l.Class, User: l.User, Team: l.Team, GPUs: l.GPUs, Duration: l.Duration}); err != nil {
		s.log().Warn("remember the wait of a lease", "lease", l.ID, "err", err)
	}
}

// tellWaits tells the wait predictor what a transition means for it: a start after waiting, the
// end of a run, or a request that left the queue.
func (s *Service) tellWaits(l *Lease, from, to State) {
	if s.Waits == nil || l.Kind != KindWorkspace || l.CPUOnly() {
		return
	}
	queuedAt := l.CreatedAt
	if !l.DecidedAt.IsZero() {
		queuedAt = l.DecidedAt
	}
	switch {
	case to == Active && (from == Queued || from == Provisioning || from == ""):
		s.Waits.Started(l, queuedAt)
	case from.Running() && to.Ended():
		s.Waits.Ended(l)
	case from == Queued && to.Ended():
		s.Waits.Left(l, queuedAt)
	}
}

// warmHistory is how far back WarmWaits reads ended leases.
const warmHistory = 30 * 24 * time.Hour

// WarmWaits, after a start, tells the wait predictor how long the leases that ended in the last
// 30 days ran (so that it expects running leases to end as early as their owners' used to) and
// which leases are running now. Leases that failed are left out: their run time says nothing
// of when their owners let go.
func (s *Service) WarmWaits(ctx context.Context) error {
	if s.Waits == nil {
		return nil
	}
	ended, err := s.List(ctx, LeaseFilter{States: []State{Released, Expired, Reclaimed},
		EndedAfter: s.Clock.Now().Add(-warmHistory), Slim: true})
	if err != nil {
		return err
	}
	slices.SortStableFunc(ended, func(a, b *Lease) int { return a.EndedAt.Compare(b.EndedAt) })
	for _, l := range ended {
		if !l.StartedAt.IsZero() && !l.EndedAt.IsZero() {
			s.Waits.Ended(l)
		}
	}
	running, err := s.List(ctx, LeaseFilter{States: []State{Active, IdleWarned}, Slim: true})
	if err != nil {
		return err
	}
	for _, l := range running {
		s.Waits.Started(l, time.Time{})
	}
	return nil
}

// PredictWait estimates how long n GPUs of a class would wait now for a member of team (""
// when not known): zero when they are free, else the time until enough running leases expire
// (their known expiries), with the queue ahead served first. Free means free to admission:
// within the class's capacity and the shared cap, and placeable (see waitCapacity).
func (s *Service) PredictWait(ctx context.Context, class, team string, n int) (WaitEstimate, error) {
	s.readInventory(ctx)
	return s.predictWait(ctx, WaitRequest{Class: class, Team: team, GPUs: n, Duration: DefaultDuration}, false)
}

// LeaseWait estimates how long a queued lease still waits, behind the leases queued before it.
// A lease the scheduler holds in its own queue (it was submitted) while the service sees room
// for it waits for something the service cannot see: its wait is the scheduler's to say
// (Unknown), never none.
func (s *Service) LeaseWait(ctx context.Context, l *Lease) (WaitEstimate, error) {
	if l.State == Queued && l.Ref == "" && strings.HasPrefix(l.Reason, reasonUnreachablePrefix) {
		return WaitEstimate{Unknown: true, SchedulerAway: true}, nil
	}
	w, err := s.predictWait(ctx, WaitRequest{Lease: l.ID, Class: l.Class, User: l.User, Team: l.Team, GPUs: l.GPUs, Duration: l.Duration}, l.Exclusive)
	if err == nil && l.State == Queued && l.Ref != "" && !w.Unknown && w.Median < time.Minute {
		return WaitEstimate{Unknown: true}, nil
	}
	return w, err
}

// predictWait is PredictWait for req; req.Lease, when set, is a lease already in the queue: only
// leases queued before it are ahead. reserve: the request takes whole nodes.
func (s *Service) predictWait(ctx context.Context, req WaitRequest, reserve bool) (WaitEstimate, error) {
	if s.schedulerSilent() {
		return WaitEstimate{Unknown: true, SchedulerAway: true}, nil
	}
	if s.Waits != nil {
		return s.predictWithModel(ctx, req)
	}
	var pool Pool
	var capa int
	var live []*Lease
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		if pool, capa, err = s.waitCapacity(ctx, tx, req, reserve); err != nil {
			return err
		}
		if live, err = s.waitLive(ctx, tx, req, pool, reserve); err != nil {
			return err
		}
		pool, capa, live, err = s.withOtherClassHolds(ctx, tx, req, reserve, pool, capa, live)
		return err
	})
	if err != nil {
		return WaitEstimate{}, err
	}
	if pool.Capacity == 0 {
		return WaitEstimate{Unknown: true, NoNodes: s.noUsableNodes(req.Class)}, nil
	}
	return expiryEstimate(s.expiryWait(s.Clock.Now(), live, req, reserve, pool, capa), pool), nil
}

// waitLive reads the live leases expiryWait needs: those of the request's class, and of every
// shared class when the shared cap applies to it.
func (s *Service) waitLive(ctx context.Context, tx Tx, req WaitRequest, pool Pool, reserve bool) ([]*Lease, error) {
	classes := []string{req.Class}
	if pool.Limit > 0 {
		classes = s.Policy.SharedClasses()
	}
	var live []*Lease
	for _, c := range classes {
		ls, err := tx.ListLeases(ctx, LeaseFilter{Class: c, States: LiveStates, Slim: true})
		if err != nil {
			return nil, err
		}
		live = append(live, ls...)
	}
	return live, nil
}

// expiryWait is how long req waits at most, as the running leases reach their expiries and the
// queue ahead is served first; -1 when it would not start once they all have. Two pools must both
// have room: the class's own GPUs (capa, its capacity under a cap, or where it can be placed when
// placement decides), and for a shared class the cap that all shared classes share, which the
// leases of the other shared classes may fill. live: the live leases of the class and, under the
// cap, of every shared class.
func (s *Service) expiryWait(now time.Time, live []*Lease, req WaitRequest, reserve bool, pool Pool, capa int) time.Duration {
	own := capa
	if pool.Limit > 0 {
		own = pool.Capacity - pool.Foreign // the cap is the second pool, below: capa is already less by what the others hold
	}
	w := releaseWait(now, live, req.GPUs, req.Lease, own, func(l *Lease) bool { return l.Class == req.Class })
	if s.placementBound(req, reserve) {
		// Where it can go decides: the first moment it can be placed, as the leases of its class
		// reach their expiries and the queue ahead is placed first.
		w = s.placementWait(now, live, req, reserve, pool.otherHeld)
	}
	if pool.Limit > 0 && w >= 0 {
		// Under the cap: the shared classes' own leases, and what leases of classes without a
		// share hold of their nodes (capLive); not the leases withOtherClassHolds made of
		// another class's on the class's nodes (no id), which are one of these already.
		capLive := make([]*Lease, 0, len(live)+len(pool.capLive))
		for _, l := range live {
			if l.ID != 0 {
				capLive = append(capLive, l)
			}
		}
		capLive = append(capLive, pool.capLive...)
		capped := releaseWait(now, capLive, req.GPUs, req.Lease, pool.Limit-pool.SharedForeign, func(*Lease) bool { return true })
		if capped < 0 {
			return capped
		}
		w = max(w, capped)
	}
	return w
}

// withOtherClassHolds counts what the scheduler reports used on the class's nodes that the
// service's own running leases of another class hold (a node in both classes' partitions, whose
// GPUs an exclusive lease of the other class or a reservation took whole, or a lease of it uses):
// not jobs outside the service, whose ends are unknown, but GPUs of the class held until those
// leases' ends. They come off the pool's Foreign (and SharedForeign), and join live as leases of
// the class that hold them until then, on their node, so that the wait counts on their ends: for
// a request whose wait the free GPUs alone decide, and for one whose wait where it can be placed
// decides (placementWait then reads those GPUs of the node as held by these leases, not as used
// by jobs outside the service, pool.otherHeld). A lease of another class that holds whole nodes
// holds every GPU of them on the class's side too, also those the scheduler does not report used
// there (the classes count the same GPUs, and its job is the service's own): pool.unseen.
// Under the capacity share, what the running leases of classes without a share hold of every
// shared class's nodes is counted the same way (capHeld) into pool.capLive, held until their
// ends, for the wait under the cap (expiryWait).
func (s *Service) withOtherClassHolds(ctx context.Context, tx Tx, req WaitRequest, reserve bool, pool Pool, capa int, live []*Lease) (Pool, int, []*Lease, error) {
	inv, ix := s.inventory()
	capShared := pool.Limit > 0 && len(s.capNeighbours(s.poolClasses(req.Class))) > 0
	if pool.Foreign == 0 && !sharesNodes(inv, ix, req.Class) && !capShared {
		return pool, capa, live, nil
	}
	var others []*Lease
	readOthers := func() error {
		if others != nil {
			return nil
		}
		ls, err := tx.ListLeases(ctx, LeaseFilter{Kind: KindWorkspace, States: []State{Provisioning, Active, IdleWarned}})
		if err != nil {
			return err
		}
		others = make([]*Lease, 0, len(ls))
		for _, l := range ls {
			if l.Class != req.Class && l.Node != "" {
				others = append(others, l)
			}
		}
		return nil
	}
	if capShared {
		// What leases of classes without a share hold of the shared classes' nodes counts
		// against the cap until their ends (capHeld, as poolFrom counts it): of SharedForeign,
		// what the scheduler reports of them; the rest, unseen, is among SharedUsed.
		if err := readOthers(); err != nil {
			return pool, capa, live, err
		}
		used := capUsed(inv)
		for _, o := range others {
			hold, seen, _ := s.capHeld(inv, ix, o.Class, o.GPUs, o.Node, o.Exclusive, used)
			if hold == 0 {
				continue
			}
			pool.SharedForeign = max(0, pool.SharedForeign-seen)
			pool.capLive = append(pool.capLive, &Lease{Kind: KindWorkspace, Class: o.Class, Team: o.Team, State: Active, GPUs: hold,
				StartedAt: o.StartedAt, ExpiresAt: o.ExpiresAt, Duration: o.Duration})
		}
	}
	for _, n := range inv {
		if n.Class != req.Class || n.Used == 0 && len(ix.byName[n.Name]) < 2 {
			continue
		}
		if err := readOthers(); err != nil {
			return pool, capa, live, err
		}
		used := n.Used
		for _, o := range others {
			nodes := strings.Split(o.Node, ",")
			if !slices.Contains(nodes, n.Name) {
				continue
			}
			whole := o.Exclusive || len(nodes) > 1 // whole nodes, in every class they are in
			hold := max(1, o.GPUs/len(nodes))
			// Where its GPUs are among the class's on the node (the classes count them alike)
			// and it does not take the node whole, the scheduler, which leaves the service's own
			// jobs out on both sides, reports none of them used: they are held until its end,
			// unseen.
			seen := 0
			if whole || !alikeOn(inv, ix, n.Name, req.Class, o.Class) {
				if c, _ := s.Policy.Class(o.Class); whole || c != nil && c.Exclusive() {
					hold = n.GPUs // it holds the node whole
				}
				seen = min(hold, used) // what the scheduler reports used on the class's side
				if !whole {
					hold = seen
				}
			}
			if hold == 0 {
				continue
			}
			used -= seen
			pool.Foreign -= seen
			if pool.Limit > 0 && s.capped(o.Class) {
				// A lease of a shared class, under the cap as its class's: not a job outside the
				// service. One of a class without a share is counted above (capLive).
				pool.SharedForeign = max(0, pool.SharedForeign-seen)
			}
			if pool.otherHeld == nil {
				pool.otherHeld = map[string]int{}
			}
			pool.otherHeld[n.Name] += seen
			// A whole-node lease whose GPUs the classes count alike: the scheduler reports none
			// of them used on either side (the service's own job), yet the class cannot have
			// them until it ends.
			pool.unseen += hold - seen
			// Held for the request's team: on an exclusive class, a lease of another class is
			// no other team's lease of the class that keeps the request off the node's free GPUs.
			live = append(live, &Lease{Kind: KindWorkspace, Class: req.Class, Team: req.Team, State: Active, GPUs: hold,
				Node: n.Name, StartedAt: o.StartedAt, ExpiresAt: o.ExpiresAt, Duration: o.Duration})
		}
	}
	if s.placementBound(req, reserve) {
		return pool, capa, live, nil // placementWait decides, on the nodes
	}
	// The request's wait is not placement-bound: its capacity is the pool's reachable GPUs
	// (waitCapacity), now with those held until known ends.
	return pool, pool.Reachable(), live, nil
}

// sharesNodes says whether a node of the class is in another class's partition too.
func (s *Service) sharesNodes(class string) bool {
	inv, ix := s.inventory()
	return sharesNodes(inv, ix, class)
}

// sharesNodes says whether a node of the class is in another class's partition too (listed
// under both).
func sharesNodes(inv []Node, ix *nodeIndex, class string) bool {
	if ix == nil {
		return false
	}
	for i := range inv {
		if inv[i].Class == class && len(ix.byName[inv[i].Name]) > 1 {
			return true
		}
	}
	return false
}

// expiryEstimate is the estimate for a wait bounded by the running leases' expiries (expiryWait).
// A request that would not start once they all have, while jobs outside the service hold GPUs
// of its pool, waits for jobs whose ends only the scheduler knows: no estimate.
func expiryEstimate(w time.Duration, pool Pool) WaitEstimate {
	switch {
	case w < 0 && (pool.Foreign > 0 || pool.Limit > 0 && pool.SharedForeign > 0):
		return WaitEstimate{Unknown: true}
	case w < 0:
		return WaitEstimate{Median: 24 * time.Hour, P90: 48 * time.Hour}
	case w == 0:
		return WaitEstimate{}
	}
	return WaitEstimate{Median: w, P90: w + w/4}
}

// waitCapacity is the class's pool and the capacity a wait prediction for req is told: what the
// class's running leases hold plus the free GPUs a request of req's shape could be placed on now
// (usableGPUs), never more than the pool's reachable capacity (under the shared cap, less what
// jobs outside the service hold). GPUs that admission would not give the request, on another
// team's node of an exclusive class, too few on any one node, or held by jobs outside the
// service, are not counted as free, so a request that queues is not promised that no wait is
// expected. A class the scheduler places gets the pool's reachable capacity, and so does a request
// of one GPU on a class that is not exclusive (any free GPU will do), which needs only the pool's
// sums, not every running lease.
func (s *Service) waitCapacity(ctx context.Context, tx Tx, req WaitRequest, reserve bool) (Pool, int, error) {
	c, _ := s.Policy.Class(req.Class)
	exclusive := c != nil && c.Exclusive()
	if !s.placesItself(req.Class) || (!exclusive && !reserve && req.GPUs <= 1) {
		p, err := s.pool(ctx, tx, req.Class)
		return p, p.Reachable(), err
	}
	p, held, err := s.poolHeld(ctx, tx, req.Class)
	if err != nil {
		return p, 0, err
	}
	inv, ix := s.inventory()
	ours := 0
	for _, h := range held {
		if h.Class == req.Class { // not another class's whole-node lease (poolFrom)
			ours += h.GPUs
		}
	}
	usable := usableGPUs(inv, ix, held, placeRequest{Class: req.Class, Team: req.Team, GPUs: req.GPUs,
		ExclusiveClass: exclusive, Reserve: reserve})
	return p, min(p.Reachable(), ours+usable), nil
}

// releaseWait is how long until n more GPUs fit in a pool of capa GPUs, as the running leases in
// it reach their expiries and the queue ahead is served first; -1 when they never would.
func releaseWait(now time.Time, live []*Lease, n int, self LeaseID, capa int, in func(*Lease) bool) time.Duration {
	type rel struct {
		at time.Time
		n  int
	}
	var rels []rel
	free, need := capa, n
	for _, l := range live {
		if !in(l) {
			continue
		}
		if l.State.Running() {
			free -= l.GPUs
			end := l.ExpiresAt
			if end.IsZero() {
				end = now.Add(l.Duration)
			}
			rels = append(rels, rel{end, l.GPUs})
		} else if self == 0 || l.ID < self {
			need += l.GPUs // the queue ahead
		}
	}
	if free >= need {
		return 0
	}
	sort.Slice(rels, func(i, j int) bool { return rels[i].at.Before(rels[j].at) })
	for _, r := range rels {
		free += r.n
		if free >= need {
			return max(time.Second, r.at.Sub(now))
		}
	}
	return -1
}

// predictWithModel asks the wait predictor, with the queue ahead of the request and the capacity
// the request can reach now (waitCapacity). The predictor knows only the leases of the request's
// class: where the request does not fit in what its class can reach even once every lease of the
// class has ended (the other shared classes fill the cap, or jobs outside the service the class),
// the wait is what the running leases' expiries say (expiryWait), as without a predictor; and
// where placement decides, the predictor's answer is never longer than that bound, which counts
// the shared cap too.
func (s *Service) predictWithModel(ctx context.Context, req WaitRequest) (WaitEstimate, error) {
	var ahead []*Lease
	var capa int
	var fallback *WaitEstimate
	if err := s.Store.View(ctx, func(tx Tx) error {
		queued, err := tx.ListLeases(ctx, LeaseFilter{Class: req.Class, States: []State{Queued}, Slim: true})
		if err != nil {
			return err
		}
		inQueue, reserve := false, false
		for _, l := range queued {
			if req.Lease == 0 || l.ID < req.Lease {
				ahead = append(ahead, l)
			} else if l.ID == req.Lease {
				req.User, req.Team, req.GPUs, req.Duration = l.User, l.Team, l.GPUs, l.Duration
				inQueue, reserve = true, l.Exclusive
			}
		}
		if req.Lease != 0 && !inQueue {
			// A lease that was placed at once (rememberWait): what it fitted in is the pool.
			p, err := s.pool(ctx, tx, req.Class)
			capa = p.Reachable()
			return err
		}
		var pool Pool
		pool, capa, err = s.waitCapacity(ctx, tx, req, reserve)
		if err == nil && s.noUsableNodes(req.Class) {
			// What the predictor learnt of other days says nothing of nodes that take no jobs.
			fallback = &WaitEstimate{Unknown: true, NoNodes: true}
			return nil
		}
		if err != nil || pool.Capacity == 0 || (!s.placementBound(req, reserve) && capa >= req.GPUs && !s.sharesNodes(req.Class)) {
			return err // the predictor alone: every lease it must see is of the class
		}
		live, err := s.waitLive(ctx, tx, req, pool, reserve)
		if err != nil {
			return err
		}
		reachable := capa // what the predictor would be told: the class's own leases' room
		if pool, capa, live, err = s.withOtherClassHolds(ctx, tx, req, reserve, pool, capa, live); err != nil {
			return err
		}
		w := s.expiryWait(s.Clock.Now(), live, req, reserve, pool, capa)
		if reachable-pool.unseen < req.GPUs {
			est := expiryEstimate(w, pool)
			fallback = &est
			return nil
		}
		if w >= 0 {
			req.Bounded, req.AtMost = true, w
		}
		return nil
	}); err != nil {
		return WaitEstimate{}, err
	}
	if fallback != nil {
		if req.Lease != 0 {
			// The predictor is still asked about a queued lease, so that it learns from what
			// the lease then waits, as it does from every other queued lease; its answer is
			// not given.
			req.Unshown = true
			s.Waits.Predict(s.Clock.Now(), req, ahead, capa)
		}
		return *fallback, nil
	}
	return s.Waits.Predict(s.Clock.Now(), req, ahead, capa), nil
}

// placementBound says whether where a request can go decides its wait, beyond how many GPUs are
// free: the service places its class, and it is of an exclusive class, a reservation, or more
// than one GPU (which must fit one node, or take whole ones).
func (s *Service) placementBound(req WaitRequest, reserve bool) bool {
	c, _ := s.Policy.Class(req.Class)
	return s.placesItself(req.Class) && (c != nil && c.Exclusive() || reserve || req.GPUs > 1)
}

// placementWait is how long until a request can be placed where the service places its class
// (exclusive classes keep one team per node; reservations and leases larger than a node take whole
// nodes): the running leases free their GPUs at their expiries, and the leases queued ahead are
// placed first, in order, each holding its GPUs for its duration. An expiry is the latest a lease
// ends, so this is how long it waits at most, short of extensions; -1 when it would not be placed
// once every running lease has ended. live are live leases (those of other classes are passed over).
// otherHeld are, by node, the GPUs the scheduler reports used on the class's side of a node that
// leases of another class hold (withOtherClassHolds): live holds them, as leases of the class, until
// those leases' ends, so they are not also used for good.
func (s *Service) placementWait(now time.Time, live []*Lease, req WaitRequest, reserve bool, otherHeld map[string]int) time.Duration {
	c, _ := s.Policy.Class(req.Class)
	r := placeRequest{Class: req.Class, Team: req.Team, GPUs: req.GPUs, ExclusiveClass: c != nil && c.Exclusive(), Reserve: reserve}
	inv, ix := s.inventory()
	if len(otherHeld) > 0 {
		inv = slices.Clone(inv)
		for i := range inv {
			if inv[i].Class == r.Class {
				inv[i].Used = max(0, inv[i].Used-otherHeld[inv[i].Name])
			}
		}
	}
	type hold struct {
		h   Holding
		end time.Time
	}
	var holds []hold
	var queue []*Lease
	for _, l := range live {
		switch {
		case l.Class != r.Class:
		case l.State.Running():
			end := l.ExpiresAt
			if end.IsZero() {
				end = now.Add(l.Duration)
			}
			holds = append(holds, hold{Holding{Class: l.Class, Team: l.Team, GPUs: l.GPUs, Node: l.Node, GPUIndex: l.GPUIndex, Reserved: l.Exclusive}, end})
		case l.State == Queued && (req.Lease == 0 || l.ID < req.Lease):
			queue = append(queue, l)
		}
	}
	slices.SortFunc(queue, func(a, b *Lease) int { return cmp.Compare(a.ID, b.ID) })
	self := &Lease{Class: r.Class, Team: r.Team, GPUs: r.GPUs, Exclusive: r.Reserve, Duration: req.Duration}
	queue = append(queue, self)
	for t := now; ; {
		var held []Holding
		next := time.Time{}
		for _, h := range holds {
			if h.end.After(t) {
				held = append(held, h.h)
				if next.IsZero() || h.end.Before(next) {
					next = h.end
				}
			}
		}
		for len(queue) > 0 {
			q := queue[0]
			pl, ok := place(inv, ix, held, placeRequest{Class: q.Class, Team: q.Team, GPUs: q.GPUs, ExclusiveClass: r.ExclusiveClass, Reserve: q.Exclusive})
			if !ok {
				break
			}
			if q == self {
				return t.Sub(now)
			}
			queue = queue[1:]
			h := Holding{Class: q.Class, Team: q.Team, GPUs: q.GPUs, Node: strings.Join(pl.Nodes, ","), GPUIndex: pl.GPUs, Reserved: q.Exclusive}
			end := t.Add(q.Duration)
			holds = append(holds, hold{h, end})
			held = append(held, h)
			if next.IsZero() || end.Before(next) {
				next = end
			}
		}
		if next.IsZero() {
			return -1
		}
		t = next
	}
}

// QueuePlace says where a queued lease stands in its class's queue, counted now: 1 when no lease
// of the class queued before it waits in the service's queue. startQueued tries the class's
// queued leases in this order, oldest first. ok is false where the service cannot say: the lease
// is not queued, or it waits in the scheduler's own queue (its job is submitted), whose order
// only the scheduler knows.
func (s *Service) QueuePlace(ctx context.Context, l *Lease) (place int, ok bool) {
	if l == nil || l.Kind != KindWorkspace || l.State != Queued || l.Ref != "" {
		return 0, false
	}
	var queued []*Lease
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		queued, err = tx.ListLeases(ctx, LeaseFilter{Class: l.Class, States: []State{Queued}})
		return err
	})
	if err != nil {
		return 0, false
	}
	place = 1
	found := false
	for _, q := range queued {
		switch {
		case q.ID == l.ID:
			found = q.Ref == ""
		case q.Ref == "" && q.ID < l.ID:
			place++
		}
	}
	return place, found
}
