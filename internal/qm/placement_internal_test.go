package qm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// twoIslands is an 8-GPU node with two NVLink islands of four, each on its own NUMA node (a
// two-socket PCIe server with NVLink bridges, or half of an HGX board per socket).
func twoIslands(name string) Node {
	return Node{Name: name, Class: "train", GPUs: 8,
		Island: []int{0, 0, 0, 0, 1, 1, 1, 1}, NUMA: []int{0, 0, 0, 0, 1, 1, 1, 1}}
}

// switched is an 8-GPU node whose GPUs all share one NVSwitch island, four on each NUMA node
// (a DGX H100).
func switched(name string) Node {
	return Node{Name: name, Class: "train", GPUs: 8,
		Island: []int{0, 0, 0, 0, 0, 0, 0, 0}, NUMA: []int{0, 0, 0, 0, 1, 1, 1, 1}}
}

// pairs is an 8-GPU node with NVLink bridges between pairs of GPUs, two pairs per NUMA node.
func pairs(name string) Node {
	return Node{Name: name, Class: "train", GPUs: 8,
		Island: []int{0, 0, 1, 1, 2, 2, 3, 3}, NUMA: []int{0, 0, 0, 0, 1, 1, 1, 1}}
}

func hold(node string, gpus ...int) Holding {
	return Holding{Class: "train", Team: "vision", GPUs: len(gpus), Node: node, GPUIndex: gpus}
}

func mustPlace(t *testing.T, inv []Node, held []Holding, gpus int) Placement {
	t.Helper()
	p, ok := place(inv, nil, held, placeRequest{Class: "train", Team: "vision", GPUs: gpus})
	if !ok {
		t.Fatalf("%d GPUs found no room; held %+v", gpus, held)
	}
	return p
}

// onOneIsland reports whether the GPUs share one island of the node.
func onOneIsland(nd Node, gpus []int) bool {
	for _, g := range gpus {
		if nd.Island[g] != nd.Island[gpus[0]] {
			return false
		}
	}
	return true
}

// A 4-GPU lease on a partly occupied two-node inventory lands inside one NVLink island (and one
// NUMA node), where a first fit would have split it across two; a 2-GPU lease then fills the gap
// that fits it exactly instead of breaking a whole island; when no island has room left, the
// lease is spread, and says so.
func TestFourGPUsLandInOneNVLinkIsland(t *testing.T) {
	inv := []Node{twoIslands("gpu01"), twoIslands("gpu02")}
	held := []Holding{
		hold("gpu01", 0, 1), // gpu01: island 0 has 2 free, island 1 has 4
		hold("gpu02", 0),    // gpu02: 3 free in each island
		hold("gpu02", 4),
	}
	if ff, _ := firstFit(inv, held, 4); onOneIsland(inv[0], ff.GPUs) {
		t.Fatalf("first fit gave %v on %v, in one island: the inventory does not test anything", ff.GPUs, ff.Nodes)
	}
	p := mustPlace(t, inv, held, 4)
	if p.Nodes[0] != "gpu01" || !slices.Equal(p.GPUs, []int{4, 5, 6, 7}) || p.Connection != ConnectionIsland {
		t.Fatalf("4 GPUs: %v %v %q; want gpu01 GPUs 4-7, the one island with room, connected", p.Nodes, p.GPUs, p.Connection)
	}
	held = append(held, hold("gpu01", p.GPUs...))

	p = mustPlace(t, inv, held, 2)
	if p.Nodes[0] != "gpu01" || !slices.Equal(p.GPUs, []int{2, 3}) || p.Connection != ConnectionIsland {
		t.Fatalf("2 GPUs: %v %v %q; want gpu01 GPUs 2-3, the island they fill exactly", p.Nodes, p.GPUs, p.Connection)
	}
	held = append(held, hold("gpu01", p.GPUs...))

	p = mustPlace(t, inv, held, 4)
	if p.Nodes[0] != "gpu02" || len(p.GPUs) != 4 || p.Connection != ConnectionSpread {
		t.Fatalf("4 GPUs with 3 free per island: %v %v %q; want 4 on gpu02, spread", p.Nodes, p.GPUs, p.Connection)
	}
	for _, g := range p.GPUs {
		if g == 0 || g == 4 {
			t.Fatalf("4 GPUs on gpu02: %v includes a taken GPU", p.GPUs)
		}
	}
}

// On a node whose GPUs share one NVSwitch island, the GPUs of a lease stay on one NUMA node when
// one has room, and the tightest NUMA part is filled first.
func TestOneNUMANodeWithinAnIsland(t *testing.T) {
	inv := []Node{switched("dgx01")}
	held := []Holding{hold("dgx01", 0, 1)}
	p := mustPlace(t, inv, held, 4)
	if !slices.Equal(p.GPUs, []int{4, 5, 6, 7}) || p.Connection != ConnectionIsland {
		t.Fatalf("4 GPUs: %v %q; want 4-7, the NUMA node with room", p.GPUs, p.Connection)
	}
	p = mustPlace(t, inv, held, 2)
	if !slices.Equal(p.GPUs, []int{2, 3}) {
		t.Fatalf("2 GPUs: %v; want 2-3, which fill NUMA node 0", p.GPUs)
	}
	// Nothing fits one NUMA node: one island still, across both.
	held = append(held, hold("dgx01", 4, 5))
	p = mustPlace(t, inv, held, 4)
	if !slices.Equal(p.GPUs, []int{2, 3, 6, 7}) || p.Connection != ConnectionIsland {
		t.Fatalf("4 GPUs over two half-full NUMA nodes: %v %q; want 2,3,6,7 in the one island", p.GPUs, p.Connection)
	}
}

// Without an island that holds a lease, the lease spans as few islands as it can, on one NUMA
// node when one has room: on NVLink pairs a 4-GPU lease takes two pairs of one socket, and is
// recorded as wider than the node's islands (no placement could have done better).
func TestSpreadOverFewestIslandsOfOneNUMANode(t *testing.T) {
	inv := []Node{pairs("pcie01")}
	p := mustPlace(t, inv, []Holding{hold("pcie01", 0)}, 4)
	if !slices.Equal(p.GPUs, []int{4, 5, 6, 7}) || p.Connection != ConnectionWider {
		t.Fatalf("4 GPUs: %v %q; want the two whole pairs of NUMA node 1, wider than any island", p.GPUs, p.Connection)
	}
	p = mustPlace(t, inv, []Holding{hold("pcie01", 0, 4)}, 3)
	if !slices.Equal(p.GPUs, []int{1, 2, 3}) && !slices.Equal(p.GPUs, []int{5, 6, 7}) {
		t.Fatalf("3 GPUs: %v; want a pair and the lone GPU of one NUMA node", p.GPUs)
	}
}

// Nodes whose topology is not known are used after the nodes where a lease gets one island, and
// their leases are not counted as connected; a single GPU simply packs.
func TestUnknownTopology(t *testing.T) {
	plain := Node{Name: "a-plain", Class: "train", GPUs: 8}
	inv := []Node{plain, twoIslands("b-known")}
	p := mustPlace(t, inv, nil, 4)
	if p.Nodes[0] != "b-known" || p.Connection != ConnectionIsland {
		t.Fatalf("4 GPUs: %v %q; want the node with a known island", p.Nodes, p.Connection)
	}
	held := []Holding{hold("b-known", 0, 1, 2, 4, 5, 6)}
	p = mustPlace(t, inv, held, 4)
	if p.Nodes[0] != "a-plain" || p.Connection != ConnectionUnknown || !slices.Equal(p.GPUs, []int{0, 1, 2, 3}) {
		t.Fatalf("4 GPUs with no island free: %v %v %q; want a-plain 0-3, connection unknown", p.Nodes, p.GPUs, p.Connection)
	}
	p = mustPlace(t, inv, held, 1)
	if p.Nodes[0] != "b-known" || p.Connection != ConnectionIsland {
		t.Fatalf("1 GPU: %v %v %q; want the fuller node b-known", p.Nodes, p.GPUs, p.Connection)
	}
}

// Reservations and leases larger than a node take whole free nodes; an exclusive class keeps
// one team per node; GPUs other jobs hold (the scheduler's count) are never given out.
func TestWholeNodesTeamsAndOthersJobs(t *testing.T) {
	inv := []Node{twoIslands("gpu01"), twoIslands("gpu02"), twoIslands("gpu03")}
	held := []Holding{hold("gpu01", 0)}
	p, ok := place(inv, nil, held, placeRequest{Class: "train", Team: "vision", GPUs: 2, Reserve: true})
	if !ok || !slices.Equal(p.Nodes, []string{"gpu02"}) || p.GPUs != nil || p.Connection != ConnectionNodes {
		t.Fatalf("a reservation: %+v %v; want gpu02 whole", p, ok)
	}
	p, ok = place(inv, nil, held, placeRequest{Class: "train", Team: "vision", GPUs: 16})
	if !ok || !slices.Equal(p.Nodes, []string{"gpu02", "gpu03"}) || p.Connection != ConnectionNodes {
		t.Fatalf("16 GPUs: %+v %v; want gpu02 and gpu03 whole", p, ok)
	}
	p, ok = place(inv, nil, held, placeRequest{Class: "train", Team: "language", GPUs: 1, ExclusiveClass: true})
	if !ok || p.Nodes[0] == "gpu01" {
		t.Fatalf("another team's GPU on an exclusive class: %+v %v; gpu01 runs vision", p, ok)
	}
	busy := slices.Clone(inv)
	busy[1].Used, busy[2].Used = 5, 8
	p, ok = place(busy, nil, held, placeRequest{Class: "train", Team: "vision", GPUs: 4})
	if !ok || p.Nodes[0] != "gpu01" || !slices.Equal(p.GPUs, []int{4, 5, 6, 7}) {
		t.Fatalf("4 GPUs beside others' jobs: %+v %v; want gpu01 4-7", p, ok)
	}
	if _, ok := place(busy, nil, append(held, hold("gpu01", 4, 5, 6, 7)), placeRequest{Class: "train", Team: "vision", GPUs: 4}); ok {
		t.Fatal("4 GPUs placed where only 3 + 3 are free")
	}
}

// firstFit is the baseline placement: the first node with room, its lowest free GPUs.
func firstFit(inv []Node, held []Holding, n int) (Placement, bool) {
	ix := indexNodes(inv)
	taken := ix.taken(inv, "train", held)
	for i, nd := range inv {
		t := ix.of(taken, i)
		if countFree(t) < n {
			continue
		}
		var gs []int
		for g := 0; g < nd.GPUs && len(gs) < n; g++ {
			if !t[g] {
				gs = append(gs, g)
			}
		}
		conn := ConnectionSpread
		if onOneIsland(nd, gs) {
			conn = ConnectionIsland
		}
		return Placement{Nodes: []string{nd.Name}, GPUs: gs, Connection: conn}, true
	}
	return Placement{}, false
}

// fragmentation is the share of free GPUs that are not in a wholly free NVLink island: free
// GPUs a lease of a whole island cannot use. 0 when nothing is free.
func fragmentation(inv []Node, held []Holding) float64 {
	ix := indexNodes(inv)
	taken := ix.taken(inv, "train", held)
	free, stranded := 0, 0
	for i, nd := range inv {
		t := ix.of(taken, i)
		busy := map[int]bool{}
		for g, k := range nd.Island {
			if t[g] {
				busy[k] = true
			}
		}
		for g, k := range nd.Island {
			if !t[g] {
				free++
				if busy[k] {
					stranded++
				}
			}
		}
	}
	if free == 0 {
		return 0
	}
	return float64(stranded) / float64(free)
}

// churn replays one seeded sequence of requests through a placement policy: 1,000 requests of 1,
// 2, 4 or 8 GPUs (40, 30, 20 and 10 %) arrive one per step and hold their GPUs for 5 to 60 steps;
// a request that finds no room is turned away. It reports the mean fragmentation after each
// step, the share of multi-GPU leases placed in one island, and how many were turned away.
func churn(inv []Node, placeFn func([]Node, []Holding, int) (Placement, bool)) (frag, connected float64, refused int) {
	rng := rand.New(rand.NewPCG(12, 2026))
	type running struct {
		h   Holding
		end int
	}
	var live []running
	multi, conn := 0, 0
	var sum float64
	const steps = 1000
	for step := range steps {
		kept := live[:0]
		for _, r := range live {
			if r.end > step {
				kept = append(kept, r)
			}
		}
		live = kept
		var n int
		switch x := rng.IntN(10); {
		case x < 4:
			n = 1
		case x < 7:
			n = 2
		case x < 9:
			n = 4
		default:
			n = 8
		}
		hold := 5 + rng.IntN(56)
		held := make([]Holding, len(live))
		for i, r := range live {
			held[i] = r.h
		}
		if p, ok := placeFn(inv, held, n); ok {
			live = append(live, running{Holding{Class: "train", Team: "vision", GPUs: n, Node: p.Nodes[0], GPUIndex: p.GPUs}, step + hold})
			held = append(held, live[len(live)-1].h)
			if n > 1 {
				multi++
				if p.Connection == ConnectionIsland {
					conn++
				}
			}
		} else {
			refused++
		}
		sum += fragmentation(inv, held)
	}
	return sum / steps, float64(conn) / float64(multi), refused
}

// Over 1,000 seeded requests on a mixed 16-node cluster (islands of 4, of 2 and of 8), placement
// leaves fewer free GPUs stranded outside whole islands than first fit does, and gives more of
// the multi-GPU leases one island.
func TestFragmentationBelowFirstFit(t *testing.T) {
	var inv []Node
	for i := range 16 {
		name := fmt.Sprintf("gpu%02d", i+1)
		switch i % 3 {
		case 0:
			inv = append(inv, twoIslands(name))
		case 1:
			inv = append(inv, pairs(name))
		default:
			inv = append(inv, switched(name))
		}
	}
	ours := func(inv []Node, held []Holding, n int) (Placement, bool) {
		return place(inv, nil, held, placeRequest{Class: "train", Team: "vision", GPUs: n})
	}
	frag, conn, refused := churn(inv, ours)
	ffFrag, ffConn, ffRefused := churn(inv, firstFit)
	t.Logf("fragmentation (free GPUs outside wholly free NVLink islands / free GPUs, mean over 1,000 requests): placement %.3f, first fit %.3f", frag, ffFrag)
	t.Logf("multi-GPU leases in one NVLink island: placement %.1f%%, first fit %.1f%%; turned away: placement %d, first fit %d", conn*100, ffConn*100, refused, ffRefused)
	if frag >= ffFrag {
		t.Errorf("fragmentation %.3f is not below first fit's %.3f", frag, ffFrag)
	}
	if conn <= ffConn {
		t.Errorf("%.1f%% of multi-GPU leases in one island, first fit %.1f%%: placement should do better", conn*100, ffConn*100)
	}
}

// The GPUs a wait prediction counts as free are those placement would give a request of that
// shape: every time usableGPUs says n, n GPUs' worth of such requests can be placed one after
// another, and one more cannot.
func TestUsableGPUsAreWhatPlacementGives(t *testing.T) {
	for _, tc := range []struct {
		name string
		held []Holding
		r    placeRequest
		want int
	}{
		{"three GPUs free on each of three nodes: no room for four", []Holding{hold("a", 0), hold("b", 0), hold("c", 0)},
			placeRequest{Class: "train", Team: "vision", GPUs: 4}, 0},
		{"the same, two at a time", []Holding{hold("a", 0), hold("b", 0), hold("c", 0)},
			placeRequest{Class: "train", Team: "vision", GPUs: 2}, 6},
		{"one at a time", []Holding{hold("a", 0), hold("b", 0), hold("c", 0)},
			placeRequest{Class: "train", Team: "vision", GPUs: 1}, 9},
		{"exclusive: the other teams' nodes do not count", []Holding{hold("a", 0),
			{Class: "train", Team: "speech", GPUs: 1, Node: "b", GPUIndex: []int{0}}},
			placeRequest{Class: "train", Team: "vision", GPUs: 1, ExclusiveClass: true}, 7},
		{"larger than a node: whole free nodes", []Holding{hold("a", 0)},
			placeRequest{Class: "train", Team: "vision", GPUs: 8}, 8},
		{"a reservation: whole free nodes", []Holding{hold("a", 0)},
			placeRequest{Class: "train", Team: "vision", GPUs: 1, Reserve: true}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := []Node{
				{Name: "a", Class: "train", GPUs: 4}, {Name: "b", Class: "train", GPUs: 4}, {Name: "c", Class: "train", GPUs: 4},
				{Name: "x", Class: "other", GPUs: 4},
			}
			got := usableGPUs(inv, nil, tc.held, tc.r)
			if got != tc.want {
				t.Fatalf("usable %d GPUs, want %d", got, tc.want)
			}
			held := slices.Clone(tc.held)
			placed := 0
			for {
				p, ok := place(inv, nil, held, tc.r)
				if !ok {
					break
				}
				h := Holding{Class: tc.r.Class, Team: tc.r.Team, GPUs: tc.r.GPUs, Node: strings.Join(p.Nodes, ","), GPUIndex: p.GPUs, Reserved: tc.r.Reserve}
				held = append(held, h)
				if p.GPUs == nil { // whole nodes
					placed += 4 * len(p.Nodes)
				} else {
					placed += len(p.GPUs)
				}
			}
			if placed != got {
				t.Errorf("placement gave %d GPUs' worth of such requests; usableGPUs says %d", placed, got)
			}
		})
	}
}

// Whole nodes of different sizes: a lease holds the fewest GPUs of whole nodes that hold what it
// asks, and placement takes free nodes that add up to exactly that, the fewest first.
func TestWholeNodesOfDifferentSizes(t *testing.T) {
	for _, tc := range []struct {
		sizes   []int
		n, want int
	}{
		{[]int{8, 8, 2, 2}, 9, 10}, {[]int{8, 8, 2, 2}, 1, 2}, {[]int{2, 2, 8, 8}, 16, 16}, {[]int{6, 4, 4}, 8, 8},
		{[]int{6, 4}, 7, 10}, {[]int{4, 4, 4}, 5, 8}, {[]int{4, 4}, 9, 0},
	} {
		if got := wholeNodeTotal(tc.sizes, tc.n); got != tc.want {
			t.Errorf("wholeNodeTotal(%v, %d) = %d, want %d", tc.sizes, tc.n, got, tc.want)
		}
	}
	for _, tc := range []struct {
		sizes []int
		want  int
		set   []int
	}{
		{[]int{2, 8, 2, 8}, 10, []int{0, 1}}, {[]int{2, 2, 2, 2, 8}, 8, []int{4}}, {[]int{2, 2, 2, 2}, 8, []int{0, 1, 2, 3}},
		{[]int{6, 4, 4}, 8, []int{1, 2}}, {[]int{8, 2}, 16, nil}, {[]int{4, 4, 4}, 8, []int{0, 1}}, {[]int{4, 4}, 6, nil},
	} {
		if got := wholeNodeSet(tc.sizes, tc.want); !slices.Equal(got, tc.set) {
			t.Errorf("wholeNodeSet(%v, %d) = %v, want %v", tc.sizes, tc.want, got, tc.set)
		}
	}
	inv := []Node{{Name: "s1", Class: "train", GPUs: 2}, {Name: "b1", Class: "train", GPUs: 8}, {Name: "b2", Class: "train", GPUs: 8}}
	if p, ok := place(inv, nil, nil, placeRequest{Class: "train", GPUs: 3}); !ok || !slices.Equal(p.Nodes, []string{"b1"}) || len(p.GPUs) != 3 {
		t.Errorf("3 GPUs where a node of 8 holds them: %+v %v", p, ok)
	}
	if p, ok := place(inv, nil, []Holding{hold("b1", 0)}, placeRequest{Class: "train", GPUs: 8, Reserve: true}); !ok || !slices.Equal(p.Nodes, []string{"b2"}) {
		t.Errorf("a reservation of 8: %+v %v; want b2 whole, not s1", p, ok)
	}
	if p, ok := place(inv, nil, []Holding{hold("b1", 0)}, placeRequest{Class: "train", GPUs: 10}); !ok || !slices.Equal(p.Nodes, []string{"s1", "b2"}) {
		t.Errorf("10 GPUs while b1 holds a lease: %+v %v; want s1 and b2 whole", p, ok)
	}
	if _, ok := place(inv, nil, []Holding{hold("b1", 0)}, placeRequest{Class: "train", GPUs: 16}); ok {
		t.Error("16 GPUs placed while only 10 are free on whole nodes")
	}
}
