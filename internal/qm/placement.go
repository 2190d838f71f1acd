package qm

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// capacityOf is how many GPUs of a class the cluster has, or 0 when the backend does not say.
func (s *Service) capacityOf(class string) int {
	n := 0
	for _, nd := range s.Backend.Inventory() {
		if nd.Class == class {
			n += nd.GPUs
		}
	}
	return n
}

// NodeSize is the most GPUs one node of a class holds, or 0 when the backend does not say.
func (s *Service) NodeSize(class string) int {
	n := 0
	for _, nd := range s.Backend.Inventory() {
		if nd.Class == class {
			n = max(n, nd.GPUs)
		}
	}
	return n
}

func (s *Service) totalCapacity() int {
	n := 0
	for _, nd := range s.Backend.Inventory() {
		n += nd.GPUs
	}
	return n
}

// sharedLimit is how many GPUs the shared classes may hold together, or 0 when there is no cap
// (no shared class, or a backend that does not say how big the cluster is).
func (s *Service) sharedLimit() int {
	share := s.Policy.CapacityShare()
	total := s.totalCapacity()
	if share <= 0 || total == 0 {
		return 0
	}
	return max(int(math.Floor(share*float64(total))), 1)
}

// Pool is what admission sees of a class right now: the one source of the catalog's free count,
// the capacity the wait predictor is told, and the cap that placement enforces.
type Pool struct {
	Capacity int // the class's GPUs; 0 when the backend does not say
	Used     int // GPUs of the class held now: this service's leases, and others' jobs per the scheduler
	// Limit is the cap on the shared classes together (0: none applies to this class), and
	// SharedUsed what they hold together now.
	Limit      int
	SharedUsed int
}

// Free is how many GPUs of the class a request could get now.
func (p Pool) Free() int {
	free := max(0, p.Capacity-p.Used)
	if p.Limit > 0 {
		free = min(free, max(0, p.Limit-p.SharedUsed))
	}
	return free
}

// Effective is how many GPUs the class can hold at most while the other shared classes hold
// what they hold now: its capacity, or less under the shared cap.
func (p Pool) Effective() int {
	if p.Limit > 0 {
		return max(0, min(p.Capacity, p.Limit-(p.SharedUsed-p.Used)))
	}
	return p.Capacity
}

// pool reads a class's pool from what runs now.
func (s *Service) pool(ctx context.Context, tx Tx, class string) (Pool, error) {
	p, _, err := s.poolHeld(ctx, tx, class)
	return p, err
}

// poolHeld is pool, with what the class's running leases hold (placement needs both; one query).
func (s *Service) poolHeld(ctx context.Context, tx Tx, class string) (Pool, []Holding, error) {
	p := Pool{Capacity: s.capacityOf(class)}
	classes := []string{class}
	c, _ := s.Policy.Class(class)
	shared := c != nil && c.CapacityShare > 0
	if shared {
		p.Limit = s.sharedLimit()
		for _, name := range s.Policy.SharedClasses() {
			if name != class {
				classes = append(classes, name)
			}
		}
	}
	held, err := tx.Held(ctx, classes)
	if err != nil {
		return p, nil, err
	}
	reported := map[string]int{}
	for _, nd := range s.Backend.Inventory() {
		reported[nd.Class] += nd.Used
	}
	ours := map[string]int{}
	for _, h := range held {
		ours[h.Class] += h.GPUs
	}
	p.Used = ours[class] + reported[class]
	for _, name := range classes {
		p.SharedUsed += ours[name] + reported[name]
	}
	var own []Holding
	for _, h := range held {
		if h.Class == class {
			own = append(own, h)
		}
	}
	return p, own, nil
}

// Pool is a class's pool now.
func (s *Service) Pool(ctx context.Context, class string) (Pool, error) {
	var p Pool
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		p, err = s.pool(ctx, tx, class)
		return err
	})
	return p, err
}

// tryPlace moves a queued lease on when its GPUs are free now: to provisioning, or straight to
// active on an instant backend. It must run under the lease's admission locks.
func (s *Service) tryPlace(ctx context.Context, tx Tx, l *Lease, reason string) (bool, error) {
	path, err := s.plan(ctx, tx, l)
	if err == nil && len(path) == 2 {
		err = s.startInstantly(ctx, l)
	}
	if err != nil || len(path) == 0 {
		return false, err
	}
	for _, st := range path {
		r := reason
		if st == Active {
			r = "workspace ready"
		}
		if err := s.transition(ctx, tx, l, st, SystemActor, r); err != nil {
			return true, err
		}
	}
	return true, nil
}

// plan chooses GPUs for a lease that waits. It changes l in memory only and returns the states l
// moves through: none when it must wait on, provisioning, or provisioning and active when the
// backend starts instantly (the caller then calls startInstantly, which needs no lease id).
func (s *Service) plan(ctx context.Context, tx Tx, l *Lease) ([]State, error) {
	inv := s.Backend.Inventory()
	if inv == nil || s.capacityOf(l.Class) == 0 {
		// The backend does not know the class's nodes (not yet, or none: a cluster that scales
		// from zero makes them when a job asks): the scheduler places it.
		return []State{Provisioning}, nil
	}
	c, _ := s.Policy.Class(l.Class)
	p, held, err := s.poolHeld(ctx, tx, l.Class)
	if err != nil {
		return nil, err
	}
	if p.Limit > 0 && p.SharedUsed+l.GPUs > p.Limit {
		l.Reason = fmt.Sprintf("waiting: shared classes may hold %d GPUs together and hold %d", p.Limit, p.SharedUsed)
		return nil, nil
	}
	pl, ok := place(inv, held, placeRequest{Class: l.Class, Team: l.Team, GPUs: l.GPUs,
		ExclusiveClass: c != nil && c.Isolation == "exclusive", Reserve: l.Exclusive})
	if !ok {
		if c != nil && c.Isolation == "exclusive" {
			l.Reason = fmt.Sprintf("waiting for %s GPUs on nodes that no other team uses (the class is exclusive)", l.Class)
		}
		return nil, nil
	}
	l.Node = strings.Join(pl.Nodes, ",")
	l.GPUIndex = pl.GPUs
	if ib, ok := s.Backend.(InstantBackend); ok && ib.StartsInstantly() {
		return []State{Provisioning, Active}, nil
	}
	return []State{Provisioning}, nil
}

// startInstantly starts a placed lease on an instant backend, in memory.
func (s *Service) startInstantly(ctx context.Context, l *Lease) error {
	st, err := s.Backend.Start(ctx, l)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	l.Connect, l.Ref = st.Connect, st.Ref
	l.StartedAt, l.ExpiresAt = now, now.Add(l.Duration)
	return nil
}

// Placement is where a lease's GPUs are: one or more nodes and, for a single node, its GPU indexes.
type Placement struct {
	Nodes []string
	GPUs  []int
	// Connected is true when all GPUs share one NVLink island on one node.
	Connected bool
}

// freeMap is which GPUs of each node are taken.
type freeMap map[string][]bool

// takenGPUs marks what running leases hold, and on each node as many more (from the top) as the
// scheduler reports held by jobs that are not this service's.
func takenGPUs(inv []Node, held []Holding) freeMap {
	taken := freeMap{}
	size := map[string]int{}
	for _, n := range inv {
		taken[n.Name] = make([]bool, n.GPUs)
		size[n.Name] = n.GPUs
	}
	for _, l := range held {
		if l.Node == "" {
			continue
		}
		nodes := strings.Split(l.Node, ",")
		if len(nodes) > 1 || l.Reserved { // whole nodes
			for _, n := range nodes {
				for i := range taken[n] {
					taken[n][i] = true
				}
			}
			continue
		}
		if len(l.GPUIndex) == 0 { // the scheduler chose the GPUs: count them, whichever they are
			left := l.GPUs
			for g := 0; g < size[l.Node] && left > 0; g++ {
				if !taken[l.Node][g] {
					taken[l.Node][g] = true
					left--
				}
			}
			continue
		}
		for _, g := range l.GPUIndex {
			if g >= 0 && g < size[l.Node] {
				taken[l.Node][g] = true
			}
		}
	}
	for _, n := range inv {
		extra := n.Used
		for g := n.GPUs - 1; g >= 0 && extra > 0; g-- {
			if !taken[n.Name][g] {
				taken[n.Name][g] = true
				extra--
			}
		}
	}
	return taken
}

// placeRequest is what placement needs of a lease.
type placeRequest struct {
	Class string
	Team  string
	GPUs  int
	// ExclusiveClass: the class's nodes run one team's leases at a time.
	ExclusiveClass bool
	// Reserve: whole nodes for this lease alone.
	Reserve bool
}

// place chooses GPUs for a request, or ok=false when they are not free now. Inside one node it
// prefers one NVLink island; among nodes it packs (the fullest node that fits) to keep whole nodes
// free for large jobs. A request larger than one node, or a reservation, takes whole free nodes.
// On an exclusive class, a node that runs another team's lease is not a candidate.
func place(inv []Node, held []Holding, r placeRequest) (Placement, bool) {
	n := r.GPUs
	taken := takenGPUs(inv, held)
	otherTeam := map[string]bool{}
	if r.ExclusiveClass {
		for _, h := range held {
			if h.Class == r.Class && h.Team != r.Team {
				for _, nd := range strings.Split(h.Node, ",") {
					otherTeam[nd] = true
				}
			}
		}
	}
	var nodes []Node
	for _, nd := range inv {
		if nd.Class == r.Class && nd.GPUs > 0 && !otherTeam[nd.Name] {
			nodes = append(nodes, nd)
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	if len(nodes) == 0 || n <= 0 {
		return Placement{}, false
	}
	if n > nodes[0].GPUs || r.Reserve {
		per := nodes[0].GPUs
		need := (n + per - 1) / per
		var got []string
		for _, nd := range nodes {
			if countFree(taken[nd.Name]) == nd.GPUs {
				got = append(got, nd.Name)
				if len(got) == need {
					return Placement{Nodes: got}, true
				}
			}
		}
		return Placement{}, false
	}
	type cand struct {
		node      string
		gpus      []int
		connected bool
		free      int
		slack     int
	}
	var best *cand
	for _, nd := range nodes {
		t := taken[nd.Name]
		free := countFree(t)
		if free < n {
			continue
		}
		// Islands that can hold the whole request, tightest first.
		islands := map[int][]int{}
		for g := 0; g < nd.GPUs; g++ {
			if !t[g] {
				isl := 0
				if g < len(nd.Island) {
					isl = nd.Island[g]
				}
				islands[isl] = append(islands[isl], g)
			}
		}
		var c *cand
		keys := make([]int, 0, len(islands))
		for k := range islands {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		for _, k := range keys {
			g := islands[k]
			if len(g) >= n && (c == nil || len(g)-n < c.slack) {
				c = &cand{node: nd.Name, gpus: append([]int(nil), g[:n]...), connected: true, free: free, slack: len(g) - n}
			}
		}
		if c == nil {
			var gs []int
			for g := 0; g < nd.GPUs && len(gs) < n; g++ {
				if !t[g] {
					gs = append(gs, g)
				}
			}
			c = &cand{node: nd.Name, gpus: gs, connected: n == 1, free: free, slack: free - n}
		}
		if best == nil || better(c.connected, c.free, best.connected, best.free) {
			best = c
		}
	}
	if best == nil {
		return Placement{}, false
	}
	return Placement{Nodes: []string{best.node}, GPUs: best.gpus, Connected: best.connected}, true
}

func better(conn bool, free int, bconn bool, bfree int) bool {
	if conn != bconn {
		return conn
	}
	return free < bfree
}

func countFree(t []bool) int {
	n := 0
	for _, x := range t {
		if !x {
			n++
		}
	}
	return n
}

// FormatGPUs writes GPU indexes as "0,1,2".
func FormatGPUs(g []int) string {
	s := make([]string, len(g))
	for i, x := range g {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// ParseGPUs reads "0,1,2".
func ParseGPUs(s string) []int {
	if s == "" {
		return nil
	}
	var out []int
	for _, p := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(p)); err == nil {
			out = append(out, n)
		}
	}
	return out
}
