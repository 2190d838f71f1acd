package qm

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Connection says how well the GPUs of a lease are connected: those the service chose, or those
// the scheduler gave the lease's job where it says (Slurm). The showback counts the multi-GPU
// leases on one node that got one NVLink island.
type Connection string

// How well a lease's GPUs are connected.
const (
	// ConnectionUnknown: the scheduler placed the lease (the service did not know the nodes), or
	// the node's NVLink islands are not known.
	ConnectionUnknown Connection = ""
	// ConnectionIsland: all the lease's GPUs are in one NVLink island of one node.
	ConnectionIsland Connection = "island"
	// ConnectionSpread: the GPUs are on one node but span NVLink islands.
	ConnectionSpread Connection = "spread"
	// ConnectionNodes: whole nodes, a reservation or a lease larger than one node.
	ConnectionNodes Connection = "nodes"
	// ConnectionWider: the GPUs are on one node, more of them than its largest NVLink island
	// holds (a node without NVLink has islands of one GPU), so no choice of GPUs was one island.
	ConnectionWider Connection = "wider"
)

// largestIsland is how many GPUs the largest of the islands (each GPU's island) holds.
func largestIsland(isl []int) int {
	size := make(map[int]int, len(isl))
	most := 0
	for _, k := range isl {
		size[k]++
		most = max(most, size[k])
	}
	return most
}

// TopologySource gives every node's GPU topology as its node agent last reported it, by node name.
type TopologySource interface {
	NodeTopology(ctx context.Context) (map[string]Topology, error)
}

// TopologyRefresh is how often the reconcile pass reads the node agents' topology again.
// Topology changes when hardware does, so a minute late is no loss.
const TopologyRefresh = time.Minute

// topologyCache holds the agents' topology in the shape the inventory needs, and the backend's
// inventory with it filled in, made again only when either changes.
type topologyCache struct {
	mu     sync.Mutex
	readAt time.Time
	nodes  atomic.Pointer[topologySnapshot]
	merged atomic.Pointer[mergedInventory]
}

// topologySnapshot is one reading of the agents' topology: each node's islands and NUMA nodes.
type topologySnapshot struct {
	nodes map[string]nodeTopology // by node name in lower case
}

type nodeTopology struct {
	island []int
	numa   []int // nil when the agent could not tell for some GPU
}

// mergedInventory is a backend inventory (known by its first element and length) with the
// topology of one snapshot (nil: none) filled in, and its index.
type mergedInventory struct {
	first *Node
	n     int
	topo  *topologySnapshot
	inv   []Node
	index *nodeIndex
}

// RefreshTopology reads the node agents' topology (Service.Topology) when the last reading is
// older than TopologyRefresh, or force. The reconcile pass calls it after refreshing the
// backend's inventory; a failed read keeps the last topology.
func (s *Service) RefreshTopology(ctx context.Context, force bool) error {
	if s.Topology == nil {
		return nil
	}
	c := &s.topo
	c.mu.Lock()
	defer c.mu.Unlock()
	now := s.Clock.Now()
	if !force && !c.readAt.IsZero() && now.Sub(c.readAt) < TopologyRefresh {
		return nil
	}
	all, err := s.Topology.NodeTopology(ctx)
	if err != nil {
		return err
	}
	snap := &topologySnapshot{nodes: make(map[string]nodeTopology, len(all))}
	for name, t := range all {
		if nt, ok := shapeTopology(t); ok {
			snap.nodes[strings.ToLower(name)] = nt // node names match ignoring A-Z case
		}
	}
	c.nodes.Store(snap)
	c.readAt = now
	return nil
}

// shapeTopology is a node's islands and NUMA nodes by GPU index, from its agent's report; ok is
// false for a report that does not list its GPUs as 0..N-1.
func shapeTopology(t Topology) (nodeTopology, bool) {
	n := len(t.GPUs)
	if n == 0 {
		return nodeTopology{}, false
	}
	nt := nodeTopology{island: make([]int, n), numa: make([]int, n)}
	numaKnown := true
	for i, g := range t.GPUs {
		if g.Index != i || g.Island < 0 || g.Island >= n {
			return nodeTopology{}, false
		}
		nt.island[i], nt.numa[i] = g.Island, g.NUMA
		numaKnown = numaKnown && g.NUMA >= 0
	}
	if !numaKnown {
		nt.numa = nil
	}
	return nt, true
}

// inventory is the backend's inventory with each node's NVLink islands and NUMA nodes filled in
// from its node agent where the backend does not know them, and its index for placement. A
// node's topology is used only when the agent reports as many GPUs as the node has for its class:
// a node whose GPUs are split between classes (two GRES types) keeps its islands unknown rather
// than guessed. Both are made again only when the backend's inventory (a new slice on each
// refresh) or the topology changes.
func (s *Service) inventory() ([]Node, *nodeIndex) {
	inv := s.Backend.Inventory()
	if len(inv) == 0 {
		return inv, nil
	}
	snap := s.topo.nodes.Load()
	if m := s.topo.merged.Load(); m != nil && m.topo == snap && m.n == len(inv) && m.first == &inv[0] {
		return m.inv, m.index
	}
	out := inv
	if snap != nil && len(snap.nodes) > 0 {
		out = make([]Node, len(inv))
		copy(out, inv)
		for i := range out {
			nd := &out[i]
			t, ok := snap.nodes[strings.ToLower(nd.Name)]
			if !ok || len(t.island) != nd.GPUs {
				continue
			}
			if nd.Island == nil {
				nd.Island = t.island
			}
			if nd.NUMA == nil && t.numa != nil {
				nd.NUMA = t.numa
			}
		}
	}
	m := &mergedInventory{first: &inv[0], n: len(inv), topo: snap, inv: out, index: indexNodes(out)}
	s.topo.merged.Store(m)
	return m.inv, m.index
}

// gpusMoved reports whether the scheduler says a lease's running job holds other GPUs than the
// lease records. A reservation's job holds its nodes whole, whatever it reports.
func gpusMoved(l *Lease, j Job) bool {
	return len(j.GPUIndex) > 0 && !l.Exclusive && j.Node != "" && !strings.ContainsAny(j.Node, ",[") &&
		!slices.Equal(l.GPUIndex, j.GPUIndex)
}

// adoptGPUs records the GPUs the scheduler gave a lease's job on its node, and how well they are
// connected, in place of what the service chose: the service's picture of the node's free GPUs,
// and the showback's well-connected share, then follow what runs.
func (s *Service) adoptGPUs(l *Lease, j Job) {
	if !gpusMoved(l, j) {
		return
	}
	l.GPUIndex = slices.Clone(j.GPUIndex)
	l.Connection = s.connectionOf(l.Class, j.Node, l.GPUIndex)
}

// connectionOf is how well the given GPUs of a node of a class are connected, as far as the
// inventory (with the node agents' topology) knows.
func (s *Service) connectionOf(class, node string, gpus []int) Connection {
	inv, ix := s.inventory()
	if ix == nil {
		return ConnectionUnknown
	}
	i, ok := ix.pos(inv, class, node)
	if !ok {
		return ConnectionUnknown
	}
	isl := islandsOf(&inv[i])
	if isl == nil {
		return ConnectionUnknown
	}
	for _, g := range gpus {
		if g < 0 || g >= len(isl) {
			return ConnectionUnknown
		}
	}
	for _, g := range gpus {
		if isl[g] != isl[gpus[0]] {
			if len(gpus) > largestIsland(isl) {
				return ConnectionWider
			}
			return ConnectionSpread
		}
	}
	return ConnectionIsland
}
