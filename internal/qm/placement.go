package qm

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/acme/quartermaster/internal/policy"
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

// CapacityOf is how many GPUs of a class the cluster has, or 0 when the backend does not say.
func (s *Service) CapacityOf(class string) int { return s.capacityOf(class) }

// noUsableNodes says whether the backend reports its nodes (it has read them) and none of class
// takes jobs now: every one is drained, down, cordoned or reserved, or none has the class's
// partition and GPU type.
func (s *Service) noUsableNodes(class string) bool {
	return s.Backend.Inventory() != nil && s.capacityOf(class) == 0
}

// NodeSize is the most GPUs one node of a class holds, or 0 when the backend does not say.
func (s *Service) NodeSize(class string) int {
	size, _ := s.nodesOf(class)
	return size
}

// NodeCount is how many nodes of class the backend reports (0 when it does not say).
func (s *Service) NodeCount(class string) int {
	_, count := s.nodesOf(class)
	return count
}

// nodesOf is what the backend reports of class's nodes: the most GPUs one holds, and how many
// there are (0 and 0 when it does not say).
func (s *Service) nodesOf(class string) (size, count int) {
	for _, nd := range s.Backend.Inventory() {
		if nd.Class == class {
			size, count = max(size, nd.GPUs), count+1
		}
	}
	return size, count
}

// WholeNodeGPUs is how many GPUs a lease of n GPUs holding whole nodes of a class holds: the
// fewest GPUs that some of the class's nodes add up to, at least n (on nodes of one size, n
// rounded up to a multiple of it). 0 when the backend does not say, or the class's nodes hold
// fewer than n together.
func (s *Service) WholeNodeGPUs(class string, n int) int {
	var sizes []int
	for _, nd := range s.Backend.Inventory() {
		if nd.Class == class && nd.GPUs > 0 {
			sizes = append(sizes, nd.GPUs)
		}
	}
	return wholeNodeTotal(sizes, n)
}

// wholeNodeTotal is the fewest GPUs, at least n, that some of the nodes of the given sizes add up
// to; 0 when all of them together hold fewer than n.
func wholeNodeTotal(sizes []int, n int) int {
	most, total := 0, 0
	for _, g := range sizes {
		most, total = max(most, g), total+g
	}
	if n <= 0 || total < n {
		return 0
	}
	if uniform(sizes) {
		return (n + most - 1) / most * most
	}
	// A smallest sum of at least n is under n+most: drop any node from a larger one and it still
	// holds n.
	best, _ := wholeNodePlan(sizes, min(total, n+most-1))
	for t := n; t < len(best); t++ {
		if best[t] >= 0 {
			return t
		}
	}
	return 0
}

// wholeNodeSet chooses among nodes of the given sizes a set whose GPUs add up to exactly want:
// the fewest nodes and, among sets of as many, the nodes listed first. It returns their positions
// in sizes, in order, or nil when no set adds up to want.
func wholeNodeSet(sizes []int, want int) []int {
	if want <= 0 || len(sizes) == 0 {
		return nil
	}
	if uniform(sizes) {
		g := sizes[0]
		if want%g != 0 || want/g > len(sizes) {
			return nil
		}
		out := make([]int, want/g)
		for i := range out {
			out[i] = i
		}
		return out
	}
	best, use := wholeNodePlan(sizes, want)
	if best[want] < 0 {
		return nil
	}
	distinct := distinctSizes(sizes)
	count := map[int]int{}
	for k := len(distinct) - 1; k >= 0; k-- {
		j := use[k][want]
		count[distinct[k]] = j
		want -= j * distinct[k]
	}
	var out []int
	for i, g := range sizes {
		if count[g] > 0 {
			out = append(out, i)
			count[g]--
		}
	}
	return out
}

// wholeNodePlan is, for each sum of GPUs up to hi, the fewest nodes of the given sizes that add up
// to it (-1: none do), and for each distinct size (largest first) and sum, how many nodes of that
// size a fewest set uses, given the sizes before it.
func wholeNodePlan(sizes []int, hi int) (best []int, use [][]int) {
	distinct := distinctSizes(sizes)
	have := map[int]int{}
	for _, g := range sizes {
		have[g]++
	}
	best = make([]int, hi+1)
	for t := range best {
		best[t] = -1
	}
	best[0] = 0
	use = make([][]int, len(distinct))
	for k, g := range distinct {
		next := make([]int, hi+1)
		use[k] = make([]int, hi+1)
		for t := range next {
			next[t] = -1
			for j := 0; j <= have[g] && j*g <= t; j++ {
				if b := best[t-j*g]; b >= 0 && (next[t] < 0 || b+j < next[t]) {
					next[t], use[k][t] = b+j, j
				}
			}
		}
		best = next
	}
	return best, use
}

// distinctSizes are the sizes that occur, largest first.
func distinctSizes(sizes []int) []int {
	out := slices.Clone(sizes)
	slices.Sort(out)
	out = slices.Compact(out)
	slices.Reverse(out)
	return out
}

func uniform(sizes []int) bool {
	for _, g := range sizes {
		if g != sizes[0] {
			return false
		}
	}
	return true
}

// totalCapacity is how many GPUs the cluster has: a node listed under several classes holds the
// GPUs that its classes count alike (Node.GRES) once (distinctGPUs).
func (s *Service) totalCapacity() int {
	inv, ix := s.inventory()
	return distinctGPUs(inv, ix, func(nd *Node) bool { return true }, func(nd *Node) int { return nd.GPUs })
}

// distinctGPUs adds up n over the entries of inv that in accepts, counting what the entries of
// one node count alike once: per node and GRES name, the most that an entry of every type ("gpu")
// reads, or the entries of each type ("gpu:a40", "gpu:l4") together, whichever is more, each type
// at the most that one of its entries reads. An entry whose GRES is not known counts on its own.
func distinctGPUs(inv []Node, ix *nodeIndex, in func(*Node) bool, n func(*Node) int) int {
	total := 0
	type byName struct {
		any   int
		typed map[string]int
	}
	var seen map[string]bool
	for i := range inv {
		nd := &inv[i]
		if !in(nd) {
			continue
		}
		if nd.GRES == "" || ix == nil || len(ix.byName[nd.Name]) < 2 {
			total += n(nd)
			continue
		}
		if seen[nd.Name] {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[nd.Name] = true
		names := map[string]*byName{}
		for _, j := range ix.byName[nd.Name] {
			e := &inv[j]
			if !in(e) {
				continue
			}
			if e.GRES == "" {
				total += n(e)
				continue
			}
			name, typ, _ := strings.Cut(e.GRES, ":")
			typ, _, _ = strings.Cut(typ, ":")
			b := names[name]
			if b == nil {
				b = &byName{typed: map[string]int{}}
				names[name] = b
			}
			if typ == "" {
				b.any = max(b.any, n(e))
			} else {
				b.typed[typ] = max(b.typed[typ], n(e))
			}
		}
		for _, b := range names {
			typed := 0
			for _, v := range b.typed {
				typed += v
			}
			total += max(b.any, typed)
		}
	}
	return total
}

// capText says what the capacity share allows and what is held, naming the classes it binds as
// the published rules do: "nb-t4 may hold 4 GPUs at once (its capacity share) and holds 4", or
// "dev and notebook together may hold 4 GPUs at once (their capacity share) and hold 4".
func (s *Service) capText(p Pool) string {
	limit, used, foreign := p.Limit, p.SharedUsed, p.SharedForeign
	var names []string
	for _, c := range s.Policy.Classes {
		if c.CapacityShare > 0 {
			names = append(names, c.Name)
		}
	}
	// What the scheduler reports in use on the classes' nodes beyond their leases (jobs outside
	// the service, the rest of a node an exclusive job of another class took) counts against the
	// cap too; said, so that "holds 4" is not read as the classes' own leases holding 4.
	var held []string
	if foreign > 0 {
		held = append(held, fmt.Sprintf("other jobs on the nodes hold %d of them, as the scheduler reports", foreign))
	}
	if p.CapOthers > 0 {
		// Leases of classes without a share on the same nodes, whose GPUs the classes count too.
		var others []string
		for _, c := range s.Policy.Classes {
			if c.CapacityShare <= 0 && slices.Contains(s.capNeighbours(names[:1]), c.Name) {
				others = append(others, c.Name)
			}
		}
		say := fmt.Sprintf("leases of %s on the same nodes hold %d of them", policy.JoinList(others, "or"), p.CapOthers)
		if p.CapMaybe > 0 {
			say += fmt.Sprintf(", %d of which perhaps not: they take GPUs of any type there, and the scheduler picks which", p.CapMaybe)
		}
		held = append(held, say)
	}
	outside := ""
	if len(held) > 0 {
		outside = " (" + strings.Join(held, ", and ") + ")"
	}
	switch {
	case len(names) == 1:
		return fmt.Sprintf("%s may hold %s at once (its capacity share) and holds %d%s", names[0], gpusWord(limit), used, outside)
	case len(names) > 4:
		return fmt.Sprintf("the %d classes with a capacity share together may hold %s at once and hold %d%s", len(names), gpusWord(limit), used, outside)
	}
	return fmt.Sprintf("%s together may hold %s at once (their capacity share) and hold %d%s", policy.JoinList(names, "and"), gpusWord(limit), used, outside)
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
	// Foreign and SharedForeign are what jobs outside the service hold of Used and SharedUsed:
	// their ends are not known, so a wait is never counted on them.
	Foreign       int
	SharedForeign int
	// otherHeld is, by node, what of the class's Foreign the service's running leases of another
	// class hold on a node in both classes' partitions (withOtherClassHolds): held until their
	// known ends, not by jobs outside the service.
	otherHeld map[string]int
	// unseen is how many GPUs of the class such leases hold whole nodes of beyond what the
	// scheduler reports used (withOtherClassHolds).
	unseen int
	// CapOthers is what of SharedUsed the service's running leases of classes without a share
	// hold on the shared classes' nodes, where the scheduler does not report it used (capHeld):
	// held until their known ends, not by jobs outside the service.
	CapOthers int
	// CapMaybe is what of CapOthers leases of a class that counts GPUs of every type may not
	// hold after all: on a node with GPUs of several types, which type the scheduler gave them
	// is not known, so they are counted as holding as many of a capped class's type as they may
	// (anyTypeExtra).
	CapMaybe int
	// capLive are those leases, as leases that hold what they hold of the shared classes' GPUs
	// until their ends (withOtherClassHolds), for the wait under the cap.
	capLive []*Lease
}

// Reachable is how many GPUs the class's leases could hold while the jobs outside the service and
// the other shared classes hold what they hold now: Effective less the class's outside jobs.
func (p Pool) Reachable() int {
	return max(0, p.Effective()-p.Foreign)
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

// pool reads a class's pool from what runs now: only the GPUs each class holds, not every
// running lease (placement alone needs those).
func (s *Service) pool(ctx context.Context, tx Tx, class string) (Pool, error) {
	classes := s.poolClasses(class)
	if len(classes) > 0 && len(s.capNeighbours(classes)) > 0 {
		// The cap counts what leases of classes without a share hold on the shared classes'
		// nodes: where they are, not only how many.
		p, _, err := s.poolHeld(ctx, tx, class)
		return p, err
	}
	sums, err := tx.HeldGPUs(ctx, classes)
	if err != nil {
		return Pool{Capacity: s.capacityOf(class)}, err
	}
	held := make([]Holding, 0, len(sums))
	for c, n := range sums {
		held = append(held, Holding{Class: c, GPUs: n})
	}
	p, _ := s.poolFrom(class, classes, held)
	return p, nil
}

// poolHeld is pool, with what the class's running leases hold (placement needs both; one query).
func (s *Service) poolHeld(ctx context.Context, tx Tx, class string) (Pool, []Holding, error) {
	classes := s.poolClasses(class)
	held, err := tx.Held(ctx, s.heldClasses(class, classes))
	if err != nil {
		return Pool{Capacity: s.capacityOf(class)}, nil, err
	}
	p, own := s.poolFrom(class, classes, held)
	return p, own, nil
}

// poolClasses are the classes whose running leases a class's pool depends on: itself, and every
// shared class when it is one.
func (s *Service) poolClasses(class string) []string {
	classes := []string{class}
	if c, _ := s.Policy.Class(class); c != nil && c.CapacityShare > 0 {
		for _, name := range s.Policy.SharedClasses() {
			if name != class {
				classes = append(classes, name)
			}
		}
	}
	return classes
}

// heldClasses are the classes whose running leases placement on a class's nodes reads: classes
// (poolClasses), and every other class with a node of the same name in the inventory (a node in
// both classes' partitions), whose whole-node leases hold it in every class (poolFrom).
func (s *Service) heldClasses(class string, classes []string) []string {
	inv, ix := s.inventory()
	if ix == nil {
		return classes
	}
	out := classes
	if more := s.capNeighbours(classes); len(more) > 0 {
		out = append(slices.Clone(classes), more...)
	}
	for i := range inv {
		if inv[i].Class != class {
			continue
		}
		for _, j := range ix.byName[inv[i].Name] {
			if c := inv[j].Class; !slices.Contains(out, c) {
				if len(out) == len(classes) {
					out = slices.Clone(out)
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// poolFrom is a class's pool from what the running leases of poolClasses(class) hold, and the
// holdings of the class itself, with those of another class that hold whole nodes of the class
// (a reservation, or a lease of several nodes, on a node in both classes' partitions): such a
// lease holds every GPU of its nodes, in every class they are in. Where the classes count the
// same GPUs, the scheduler reports none of them used by others on either side (the lease is the
// service's own job), so placement takes them from here. classes: poolClasses(class); held may
// hold more classes (heldClasses), which the sums leave out.
func (s *Service) poolFrom(class string, classes []string, held []Holding) (Pool, []Holding) {
	p := Pool{Capacity: s.capacityOf(class)}
	if c, _ := s.Policy.Class(class); c != nil && c.CapacityShare > 0 {
		p.Limit = s.sharedLimit()
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
	p.Foreign = reported[class]
	inv, ix := s.inventory()
	for _, name := range classes {
		p.SharedUsed += ours[name] + reported[name]
		p.SharedForeign += reported[name]
	}
	if p.Limit > 0 {
		// What the scheduler reports used on a node that several shared classes count alike is
		// one job's GPUs, reported on each side: counted once (distinctGPUs).
		rep := distinctGPUs(inv, ix, func(nd *Node) bool { return slices.Contains(classes, nd.Class) }, func(nd *Node) int { return nd.Used })
		p.SharedUsed += rep - p.SharedForeign
		p.SharedForeign = rep
	}
	var own []Holding
	if p.Limit > 0 && len(held) > 0 && ix != nil {
		used := capUsed(inv)
		for _, h := range held {
			hold, seen, maybe := s.capHeld(inv, ix, h.Class, h.GPUs, h.Node, h.Reserved, used)
			p.CapOthers += hold - seen
			p.CapMaybe += maybe
		}
		p.SharedUsed += p.CapOthers
	}
	for _, h := range held {
		if h.Class == class || h.GPUs > 0 && h.Node != "" && (h.Reserved || strings.IndexByte(h.Node, ',') >= 0 || alikeOn(inv, ix, h.Node, class, h.Class)) {
			own = append(own, h)
		}
	}
	return p, own
}

// alikeOn says whether the entries of node name under class and other count some of the same
// GPUs (Node.GRES), so that a lease of other there holds GPUs of class that the scheduler does
// not report used on class's side (it leaves the service's own jobs out on both).
func alikeOn(inv []Node, ix *nodeIndex, name, class, other string) bool {
	if ix == nil || class == other {
		return false
	}
	var a, b string
	for _, i := range ix.byName[name] {
		switch inv[i].Class {
		case class:
			a = inv[i].GRES
		case other:
			b = inv[i].GRES
		}
	}
	return CountsAlike(a, b)
}

// capNeighbours are the classes without a capacity share that count a node of a shared class (a
// node listed under both), when classes are a shared class's poolClasses: their leases there may
// hold GPUs of the shared classes that the scheduler does not report used (capHeld). None for a
// class without a share, or where no other class counts the shared classes' nodes, so that the
// pool of such a class is still read from the sums of what each class holds.
func (s *Service) capNeighbours(classes []string) []string {
	if c, _ := s.Policy.Class(classes[0]); c == nil || c.CapacityShare <= 0 {
		return nil
	}
	inv, ix := s.inventory()
	if ix == nil {
		return nil
	}
	shared := s.Policy.SharedClasses()
	var out []string
	for i := range inv {
		if len(ix.byName[inv[i].Name]) < 2 || !slices.Contains(shared, inv[i].Class) {
			continue
		}
		for _, j := range ix.byName[inv[i].Name] {
			if c := inv[j].Class; !slices.Contains(shared, c) && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// capped says whether a class has a capacity share.
func (s *Service) capped(class string) bool {
	c, _ := s.Policy.Class(class)
	return c != nil && c.CapacityShare > 0
}

// capUsed is, by inventory position, what the scheduler reports used on each node of a shared
// class, for capHeld to take from as it counts the leases there.
func capUsed(inv []Node) []int {
	used := make([]int, len(inv))
	for i := range inv {
		used[i] = inv[i].Used
	}
	return used
}

// capHeld is what a running lease of a class without a capacity share (class, gpus, node and
// whether it holds its nodes whole) holds of the shared classes' GPUs on its nodes, where a
// shared class counts them too: hold, the GPUs it holds there until its end, and seen, those of
// them that the scheduler reports used on the shared class's side (so already among its Used,
// which they are taken from). As withOtherClassHolds reads it for a node of one class: a lease
// that holds its nodes whole holds every GPU of them; one whose GPUs the classes count alike
// (Node.GRES) holds as many there, none of which the scheduler reports (it leaves the
// service's own jobs out on both sides); one that counts other GPUs of the node holds only what
// the scheduler reports of it. A node that several shared classes count is counted once: the
// most any of them reads. A lease of a shared class holds nothing here: the cap counts it as
// its class's. maybe is what of hold a lease of a class that counts GPUs of every type may not
// hold after all (anyTypeExtra): counted held, as it may be.
func (s *Service) capHeld(inv []Node, ix *nodeIndex, class string, gpus int, node string, whole bool, used []int) (hold, seen, maybe int) {
	if gpus <= 0 || node == "" || s.capped(class) {
		return 0, 0, 0
	}
	nodes := strings.Split(node, ",")
	whole = whole || len(nodes) > 1
	c, _ := s.Policy.Class(class)
	for _, name := range nodes {
		most, mostSeen, mostMaybe := 0, 0, 0
		for _, i := range ix.byName[name] {
			if !s.capped(inv[i].Class) {
				continue
			}
			k := max(1, gpus/len(nodes))
			h, sn, mb := min(k, inv[i].GPUs), 0, 0
			if whole || !alikeOn(inv, ix, name, inv[i].Class, class) {
				if whole || c != nil && c.Exclusive() {
					h = inv[i].GPUs
				}
				sn = min(h, used[i])
				if !whole {
					h = sn
				}
			} else if x := anyTypeExtra(inv, ix, name, inv[i].Class, class); x > 0 {
				mb = h - max(0, k-x)
			}
			used[i] -= sn
			most, mostSeen, mostMaybe = max(most, h), max(mostSeen, sn), max(mostMaybe, mb)
		}
		hold, seen, maybe = hold+most, seen+mostSeen, maybe+mostMaybe
	}
	return hold, seen, maybe
}

// anyTypeExtra is, where other counts GPUs of every type on node name ("gpu") and class one type
// of them ("gpu:a40"), how many GPUs of other types the node has beside class's: a lease of other
// there of k GPUs holds at least k less these of class's, and as many as k (the scheduler picks
// the type, and the service does not know which it gave). 0 where the type is known.
func anyTypeExtra(inv []Node, ix *nodeIndex, name, class, other string) int {
	a, b := -1, -1
	var ag, bg string
	for _, i := range ix.byName[name] {
		switch inv[i].Class {
		case class:
			a, ag = inv[i].GPUs, inv[i].GRES
		case other:
			b, bg = inv[i].GPUs, inv[i].GRES
		}
	}
	if a < 0 || b <= a || !CountsAlike(ag, bg) || strings.Contains(bg, ":") || !strings.Contains(ag, ":") {
		return 0
	}
	return b - a
}

// Pool is a class's pool now.
func (s *Service) Pool(ctx context.Context, class string) (Pool, error) {
	s.readInventory(ctx)
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
	return s.planWith(l, func() (Pool, []Holding, error) { return s.poolHeld(ctx, tx, l.Class) })
}

// placesItself reports whether the service chooses the GPUs of a lease of the class (it knows
// the class's nodes), so that plan reads what the running leases hold.
func (s *Service) placesItself(class string) bool {
	inv, _ := s.inventory()
	return inv != nil && s.capacityOf(class) > 0
}

// planWith is plan with the class's pool and holdings from poolHeld, read when needed.
//
// A CPU-only lease holds no GPU, so on every backend and class it neither waits for nor claims
// a node: it is handed to the backend at once, unplaced, and its job runs where the backend puts
// it (Slurm: the class's partition, without a GPU; Kubernetes: a node without GPUs). It takes no
// node of an exclusive class from another team either: otherTeams does not count it. The lease
// names its node once the backend says where the job runs.
func (s *Service) planWith(l *Lease, poolHeld func() (Pool, []Holding, error)) ([]State, error) {
	if l.CPUOnly() {
		return s.started(), nil
	}
	if !s.inventoryKnown() {
		// The scheduler's nodes have not been read since the start (it did not answer): a lease
		// handed to it now would go unplaced, past the class's cap and onto another team's
		// exclusive nodes. It waits here, saying so, and is placed once they are read.
		l.Reason = reasonNodesUnknown
		return nil, nil
	}
	inv, ix := s.inventory()
	if inv == nil || s.capacityOf(l.Class) == 0 {
		if t, ok := BackendAs[NodesAwayTeller](s.Backend); ok && inv != nil {
			if why := t.NodesAway(l.Class); why != "" {
				// The class's nodes are there but none takes work (cordoned, not ready): it waits
				// here, saying so, and starts when one is back, billed from when it runs.
				l.Reason = "waiting because " + why
				return nil, nil
			}
		}
		// The backend does not know the class's nodes (not yet, or none: a cluster that scales
		// from zero makes them when a job asks): the scheduler places it.
		return []State{Provisioning}, nil
	}
	c, _ := s.Policy.Class(l.Class)
	p, held, err := poolHeld()
	if err != nil {
		return nil, err
	}
	if p.Limit > 0 && p.SharedUsed+l.GPUs > p.Limit {
		l.Reason = "waiting: " + s.capText(p)
		return nil, nil
	}
	req := placeRequest{Class: l.Class, Team: l.Team, GPUs: l.GPUs, ExclusiveClass: c != nil && c.Exclusive(), Reserve: l.Exclusive}
	pl, ok := place(inv, ix, held, req)
	if !ok {
		// Said again on every try: what keeps it waiting changes (another team's lease ends, its
		// own team's leases fill the nodes), and its status shows the last word.
		l.Reason = reasonWaitingFree
		if shared := req; req.ExclusiveClass {
			// Only when another team's leases are what keeps it off GPUs that are free: where its
			// own team's leases fill the nodes, it waits for free GPUs as on any class.
			shared.ExclusiveClass = false
			if _, fits := place(inv, ix, held, shared); fits {
				l.Reason = fmt.Sprintf("waiting for %s GPUs on nodes that no other team uses (the class is exclusive)", l.Class)
			}
		}
		return nil, nil
	}
	l.Node = strings.Join(pl.Nodes, ",")
	l.GPUIndex = pl.GPUs
	l.Connection = pl.Connection
	return s.started(), nil
}

// reasonNodesUnknown is the reason of a lease that waits in the service's queue because the
// scheduler's nodes have not been read yet.
const reasonNodesUnknown = "waiting until the scheduler's nodes are known: it did not answer when asked for them; the lease is placed once it does"

// reasonUnreachablePrefix begins reasonUnreachable.
const reasonUnreachablePrefix = "waiting until the scheduler answers"

// reasonUnreachable is the reason of a lease that waits in the service's queue because the
// scheduler did not answer when its job was to be handed over; said is what its client said.
func reasonUnreachable(said string) string {
	r := reasonUnreachablePrefix + ": it does not answer now"
	if said = ReasonLine(said); said != "" {
		r += fmt.Sprintf(" (%q)", said)
	}
	return r + "; the lease is handed to it once it does"
}

// inventoryKnown reports whether the backend's nodes are known, so that placement may run: always
// on a backend whose inventory the service is given (the simulated cluster); on one whose
// inventory comes from the scheduler (InventoryRefresher), once a read has succeeded, even one
// that found no node of a class (a cluster that makes its nodes when a job asks).
func (s *Service) inventoryKnown() bool {
	if _, ok := BackendAs[InventoryRefresher](s.Backend); !ok {
		return true
	}
	return s.inventoryRead.Load() || len(s.Backend.Inventory()) > 0
}

// reasonWaitingFree is the reason of a lease that waits in the service's queue for GPUs of its
// class to be free.
const reasonWaitingFree = "waiting for free GPUs"

// started is the states a lease that may start now moves through: provisioning, and active at
// once on an instant backend.
func (s *Service) started() []State {
	if ib, ok := BackendAs[InstantBackend](s.Backend); ok && ib.StartsInstantly() {
		return []State{Provisioning, Active}
	}
	return []State{Provisioning}
}

// startInstantly starts a placed lease on an instant backend, in memory.
func (s *Service) startInstantly(ctx context.Context, l *Lease) error {
	st, err := s.Backend.Start(ctx, l)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	l.Connect, l.Ref = st.Connect, st.Ref
	if st.Node != "" { // where the backend runs it (a CPU-only job, which the service did not place)
		l.Node = st.Node
	}
	l.StartedAt, l.ExpiresAt = now, now.Add(l.Duration)
	return nil
}

// Placement is where a lease's GPUs are: one or more nodes and, for a single node, its GPU indexes.
type Placement struct {
	Nodes []string
	GPUs  []int
	// Connection says how well the GPUs are connected to one another.
	Connection Connection
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

// otherTeams are the nodes r may not use because another team's lease of an exclusive class
// holds GPUs there (nil on a class that is not exclusive).
func otherTeams(held []Holding, r placeRequest) map[string]bool {
	if !r.ExclusiveClass {
		return nil
	}
	other := map[string]bool{}
	for _, h := range held {
		// A CPU-only job (no GPUs) holds no GPU of the node it runs on, so the node stays open.
		if h.Class == r.Class && h.Team != r.Team && h.GPUs > 0 {
			for _, nd := range strings.Split(h.Node, ",") {
				other[nd] = true
			}
		}
	}
	return other
}

// usableGPUs is how many free GPUs of r's class requests of r's shape could be placed on now:
// on each node r may use, as many as whole requests of r's size fit in what is free there, or
// the whole node when it is free and r is larger than a node or a reservation. GPUs that
// placement would not give r (on another team's node of an exclusive class, or too few free on
// one node) do not count, so a wait predicted from them agrees with admission.
func usableGPUs(inv []Node, ix *nodeIndex, held []Holding, r placeRequest) int {
	if r.GPUs <= 0 {
		return 0
	}
	if ix == nil {
		ix = indexNodes(inv)
	}
	other := otherTeams(held, r)
	taken := ix.taken(inv, r.Class, held)
	whole := r.Reserve || r.GPUs > largestOf(inv, r.Class)
	n := 0
	for i := range inv {
		nd := &inv[i]
		if nd.Class != r.Class || nd.GPUs == 0 || other[nd.Name] {
			continue
		}
		free := countFree(ix.of(taken, i))
		switch {
		case whole:
			if free == nd.GPUs {
				n += free
			}
		default:
			n += free / r.GPUs * r.GPUs
		}
	}
	return n
}

// place chooses GPUs for a request, or ok=false when they are not free now.
//
// A request that fits one node gets the best-connected set free anywhere, in this order: GPUs
// in one NVLink island and one NUMA node; in one island across NUMA nodes; on a node whose
// islands are not known; spread over the fewest islands of one NUMA node; spread over the fewest
// islands. Among sets equally well connected it packs, to keep whole islands (and so whole nodes)
// free for the requests that need them: the tightest fit first (fewest GPUs left free in the
// islands it uses, then in the NUMA part it uses), then the fullest node, then the node listed
// first. A single GPU is connected wherever it is, so it simply packs.
//
// A request larger than one node, or a reservation, takes whole free nodes. On an exclusive
// class, a node that runs another team's lease of the class is not a candidate.
func place(inv []Node, ix *nodeIndex, held []Holding, r placeRequest) (Placement, bool) {
	n := r.GPUs
	if n <= 0 {
		return Placement{}, false
	}
	if ix == nil {
		ix = indexNodes(inv)
	}
	otherTeam := otherTeams(held, r)
	taken := ix.taken(inv, r.Class, held)
	first := -1
	for i := range inv {
		if inv[i].Class == r.Class && inv[i].GPUs > 0 && !otherTeam[inv[i].Name] {
			first = i
			break
		}
	}
	if first < 0 {
		return Placement{}, false
	}
	if r.Reserve || n > largestOf(inv, r.Class) {
		// Whole free nodes that add up to the GPUs the lease holds (what it is billed for): n
		// rounded up to whole nodes of the class, as Normalize rounds it.
		var all, sizes []int
		var free []string
		for i := range inv {
			nd := &inv[i]
			if nd.Class != r.Class || nd.GPUs <= 0 {
				continue
			}
			all = append(all, nd.GPUs)
			if !otherTeam[nd.Name] && countFree(ix.of(taken, i)) == nd.GPUs {
				sizes, free = append(sizes, nd.GPUs), append(free, nd.Name)
			}
		}
		set := wholeNodeSet(sizes, wholeNodeTotal(all, n))
		if set == nil {
			return Placement{}, false
		}
		got := make([]string, len(set))
		for k, i := range set {
			got[k] = free[i]
		}
		return Placement{Nodes: got, Connection: ConnectionNodes}, true
	}
	sc := ix.scratch()
	var best choice
	found := false
	for i := first; i < len(inv); i++ {
		nd := &inv[i]
		if nd.Class != r.Class || nd.GPUs == 0 || otherTeam[nd.Name] {
			continue
		}
		c, ok := evaluate(nd, ix.of(taken, i), n, sc)
		if !ok {
			continue
		}
		c.node = i
		if !found || c.better(best) {
			best, found = c, true
		}
	}
	if !found {
		return Placement{}, false
	}
	nd := &inv[best.node]
	gpus := pick(nd, ix.of(taken, best.node), n, best, sc)
	conn := ConnectionSpread
	switch {
	case best.tier == tierUnknown:
		conn = ConnectionUnknown
	case best.tier <= tierIsland:
		conn = ConnectionIsland
	case n > largestIsland(islandsOf(nd)):
		conn = ConnectionWider
	}
	return Placement{Nodes: []string{nd.Name}, GPUs: gpus, Connection: conn}, true
}

// largestOf is the most GPUs one node of class holds in inv.
func largestOf(inv []Node, class string) int {
	n := 0
	for i := range inv {
		if inv[i].Class == class {
			n = max(n, inv[i].GPUs)
		}
	}
	return n
}

// nodeIndex finds an inventory's nodes by name, and lays their GPUs out in one array: made once
// per inventory, so that a placement decision builds no map.
type nodeIndex struct {
	byName map[string][]int // positions in the inventory (a node is listed once per class)
	off    []int            // node i's GPUs are [off[i], off[i+1]) of the array
	most   int              // the most GPUs of a node
}

func indexNodes(inv []Node) *nodeIndex {
	ix := &nodeIndex{byName: make(map[string][]int, len(inv)), off: make([]int, len(inv)+1)}
	for i, nd := range inv {
		ix.byName[nd.Name] = append(ix.byName[nd.Name], i)
		ix.off[i+1] = ix.off[i] + max(nd.GPUs, 0)
		ix.most = max(ix.most, nd.GPUs)
	}
	return ix
}

// pos is where a node of a class is in the inventory.
func (ix *nodeIndex) pos(inv []Node, class, name string) (int, bool) {
	for _, i := range ix.byName[name] {
		if inv[i].Class == class {
			return i, true
		}
	}
	return 0, false
}

// of is node i's part of a taken array.
func (ix *nodeIndex) of(taken []bool, i int) []bool {
	return taken[ix.off[i]:ix.off[i+1]:ix.off[i+1]]
}

// taken says which GPUs of the class's nodes are taken: what running leases hold (held: leases
// of the class, and those of other classes that hold whole nodes: all of each), and on each node
// as many more (from the top) as the scheduler reports held by
// jobs that are not this service's.
func (ix *nodeIndex) taken(inv []Node, class string, held []Holding) []bool {
	taken := make([]bool, ix.off[len(inv)])
	for _, l := range held {
		if l.Node == "" || l.GPUs <= 0 { // a CPU-only job takes no GPU
			continue
		}
		whole := l.Reserved || strings.IndexByte(l.Node, ',') >= 0
		if l.Class != class && !whole && !alikeOn(inv, ix, l.Node, class, l.Class) {
			continue // part of a node of another class: the class's side of it counts what the scheduler reports
		}
		if whole { // whole nodes, in every class they are in
			for _, name := range strings.Split(l.Node, ",") {
				if i, ok := ix.pos(inv, class, name); ok {
					t := ix.of(taken, i)
					for g := range t {
						t[g] = true
					}
				}
			}
			continue
		}
		i, ok := ix.pos(inv, class, l.Node)
		if !ok {
			continue
		}
		t := ix.of(taken, i)
		if len(l.GPUIndex) == 0 || l.Class != class {
			// The scheduler chose the GPUs, or they are another class's, numbered on its side
			// of the node: count them, whichever they are.
			left := l.GPUs
			for g := 0; g < len(t) && left > 0; g++ {
				if !t[g] {
					t[g] = true
					left--
				}
			}
			continue
		}
		for _, g := range l.GPUIndex {
			if g >= 0 && g < len(t) {
				t[g] = true
			}
		}
	}
	for i := range inv {
		if inv[i].Class != class {
			continue
		}
		extra := inv[i].Used
		t := ix.of(taken, i)
		for g := len(t) - 1; g >= 0 && extra > 0; g-- {
			if !t[g] {
				t[g] = true
				extra--
			}
		}
	}
	return taken
}

func (ix *nodeIndex) scratch() *scratch {
	return &scratch{count: make([]int, ix.most), order: make([]int, 0, ix.most), gpus: make([]int, 0, ix.most)}
}

// How well a set of GPUs on one node is connected, best first.
const (
	tierIslandNUMA = iota // one NVLink island and one NUMA node (or the NUMA nodes are not known)
	tierIsland            // one NVLink island across NUMA nodes
	tierUnknown           // the node's NVLink islands are not known
	tierNUMA              // several islands, one NUMA node
	tierSpread            // several islands across NUMA nodes
)

// choice is the best set of GPUs on one node, as a score; pick makes it a list of GPUs.
type choice struct {
	tier    int
	islands int // how many NVLink islands the set spans
	slack   int // free GPUs left in the islands it uses: fewer is a tighter fit
	sub     int // free GPUs left in the NUMA part of its island (tierIslandNUMA)
	free    int // the node's free GPUs: fewer is a fuller node
	node    int // the node's position among the candidates
	island  int // the island (tierIslandNUMA, tierIsland)
	numa    int // the NUMA node (tierIslandNUMA, tierNUMA)
}

// better reports whether c beats o; on a tie the one seen first (o) stays.
func (c choice) better(o choice) bool {
	switch {
	case c.tier != o.tier:
		return c.tier < o.tier
	case c.islands != o.islands:
		return c.islands < o.islands
	case c.slack != o.slack:
		return c.slack < o.slack
	case c.sub != o.sub:
		return c.sub < o.sub
	}
	return c.free < o.free
}

// scratch is working memory for one placement, sized for the largest node.
type scratch struct {
	count []int // per island
	order []int // islands, for cover
	gpus  []int
}

// islandsOf is the node's NVLink island of each GPU, or nil when not known (or not usable:
// island numbers must lie in 0..GPUs-1).
func islandsOf(nd *Node) []int {
	if len(nd.Island) != nd.GPUs {
		return nil
	}
	for _, k := range nd.Island {
		if k < 0 || k >= nd.GPUs {
			return nil
		}
	}
	return nd.Island
}

// numaOf is the node's NUMA node of each GPU, or nil when not known for every GPU.
func numaOf(nd *Node) []int {
	if len(nd.NUMA) != nd.GPUs {
		return nil
	}
	for _, m := range nd.NUMA {
		if m < 0 {
			return nil
		}
	}
	return nd.NUMA
}

func numaAt(numa []int, g int) int {
	if numa == nil {
		return 0
	}
	return numa[g]
}

// evaluate finds the best set of n GPUs free on a node (t: which are taken), as a score.
func evaluate(nd *Node, t []bool, n int, sc *scratch) (choice, bool) {
	free := countFree(t)
	if free < n {
		return choice{}, false
	}
	isl := islandsOf(nd)
	if isl == nil {
		tier := tierUnknown
		if n == 1 {
			tier = tierIslandNUMA
		}
		return choice{tier: tier, islands: 1, slack: free - n, free: free}, true
	}
	numa := numaOf(nd)
	count := sc.count[:nd.GPUs]
	clear(count)
	for g, k := range isl {
		if !t[g] {
			count[k]++
		}
	}
	var best choice
	found := false
	consider := func(c choice) {
		if !found || c.better(best) {
			best, found = c, true
		}
	}
	for k, inIsland := range count {
		if inIsland < n {
			continue
		}
		fits := false
		for g := range isl {
			if t[g] || isl[g] != k || seenNUMA(isl, numa, t, k, g) {
				continue
			}
			part := 0
			m := numaAt(numa, g)
			for h := g; h < len(isl); h++ {
				if !t[h] && isl[h] == k && numaAt(numa, h) == m {
					part++
				}
			}
			if part >= n {
				fits = true
				consider(choice{tier: tierIslandNUMA, islands: 1, slack: inIsland - n, sub: part - n, free: free, island: k, numa: m})
			}
		}
		if !fits {
			consider(choice{tier: tierIsland, islands: 1, slack: inIsland - n, free: free, island: k})
		}
	}
	if found {
		return best, true
	}
	// No island holds the request: the fewest islands, within one NUMA node if one has room.
	for g := range isl {
		if t[g] || seenNUMA(nil, numa, t, -1, g) {
			continue
		}
		m := numaAt(numa, g)
		clear(count)
		for h := range isl {
			if !t[h] && numaAt(numa, h) == m {
				count[isl[h]]++
			}
		}
		if islands, slack, ok := cover(count, n, sc); ok {
			consider(choice{tier: tierNUMA, islands: islands, slack: slack, free: free, numa: m})
		}
	}
	if found {
		return best, true
	}
	clear(count)
	for g, k := range isl {
		if !t[g] {
			count[k]++
		}
	}
	islands, slack, _ := cover(count, n, sc) // free >= n: the islands together hold it
	return choice{tier: tierSpread, islands: islands, slack: slack, free: free}, true
}

// seenNUMA reports whether a free GPU before g (in island k, or in any island when k < 0) has
// g's NUMA node, so that each NUMA node is looked at once.
func seenNUMA(isl, numa []int, t []bool, k, g int) bool {
	m := numaAt(numa, g)
	for h := 0; h < g; h++ {
		if !t[h] && (k < 0 || isl[h] == k) && numaAt(numa, h) == m {
			return true
		}
	}
	return false
}

// cover chooses islands to hold n GPUs given each island's free GPUs (count): as few islands as
// possible, the fullest first, and for the last the smallest that holds the rest. It returns how
// many islands and how many free GPUs they leave, and leaves the islands in sc.order.
func cover(count []int, n int, sc *scratch) (islands, slack int, ok bool) {
	order := sc.order[:0]
	for k, c := range count {
		if c > 0 {
			order = append(order, k)
		}
	}
	// Fullest first; a lower island number first among equals. Few islands: insertion sort.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && count[order[j]] > count[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	sum := 0
	need := 0
	for need < len(order) && sum+count[order[need]] < n {
		sum += count[order[need]]
		need++
	}
	if need == len(order) {
		sc.order = order
		return 0, 0, false
	}
	rest := n - sum
	last := need
	for j := len(order) - 1; j >= need; j-- {
		if count[order[j]] >= rest {
			last = j
			break
		}
	}
	order[need], order[last] = order[last], order[need]
	sc.order = order[:need+1]
	return need + 1, sum + count[order[need]] - n, true
}

// pick lists the GPUs of a node's best choice, in index order.
func pick(nd *Node, t []bool, n int, c choice, sc *scratch) []int {
	isl, numa := islandsOf(nd), numaOf(nd)
	out := make([]int, 0, n)
	switch c.tier {
	case tierUnknown:
		for g := 0; g < len(t) && len(out) < n; g++ {
			if !t[g] {
				out = append(out, g)
			}
		}
		return out
	case tierIslandNUMA:
		if isl == nil { // a single GPU on a node whose islands are not known
			for g := range t {
				if !t[g] {
					return append(out, g)
				}
			}
		}
		for g := range t {
			if !t[g] && isl[g] == c.island && numaAt(numa, g) == c.numa && len(out) < n {
				out = append(out, g)
			}
		}
		return out
	case tierIsland:
		// The island's NUMA parts, the largest first, so the set spans as few as possible.
		gs := sc.gpus[:0]
		for g := range t {
			if !t[g] && isl[g] == c.island {
				gs = append(gs, g)
			}
		}
		part := func(g int) int {
			p := 0
			for _, h := range gs {
				if numaAt(numa, h) == numaAt(numa, g) {
					p++
				}
			}
			return p
		}
		sort.SliceStable(gs, func(i, j int) bool {
			pi, pj := part(gs[i]), part(gs[j])
			if pi != pj {
				return pi > pj
			}
			return numaAt(numa, gs[i]) < numaAt(numa, gs[j])
		})
		out = append(out, gs[:n]...)
		sort.Ints(out)
		return out
	}
	// Spread: the islands cover chose, within the NUMA node for tierNUMA.
	in := func(g int) bool { return !t[g] && (c.tier != tierNUMA || numaAt(numa, g) == c.numa) }
	count := sc.count[:nd.GPUs]
	clear(count)
	for g := range t {
		if in(g) {
			count[isl[g]]++
		}
	}
	cover(count, n, sc)
	for i, k := range sc.order {
		want := count[k]
		if i == len(sc.order)-1 {
			want = n - len(out)
		}
		for g := range t {
			if want == 0 {
				break
			}
			if in(g) && isl[g] == k {
				out = append(out, g)
				want--
			}
		}
	}
	sort.Ints(out)
	return out
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
