package qm

import (
	"sort"
	"strconv"
	"strings"
)

// Placement is where a lease's GPUs are: one or more nodes and, for a single node, its GPU indexes.
type Placement struct {
	Nodes []string
	GPUs  []int
	// Connected is true when all GPUs share one NVLink island on one node.
	Connected bool
}

// freeMap is which GPUs of each node are taken.
type freeMap map[string][]bool

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
		if len(nodes) > 1 { // whole nodes
			for _, n := range nodes {
				for i := range taken[n] {
					taken[n][i] = true
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
	return taken
}

// place chooses GPUs for n GPUs of a class, or ok=false when they are not free now. Inside one node
// it prefers one NVLink island; among nodes it packs (the fullest node that fits) to keep whole nodes
// free for large jobs. A request larger than one node takes whole free nodes.
func place(inv []Node, held []Holding, class string, n int) (Placement, bool) {
	taken := takenGPUs(inv, held)
	var nodes []Node
	for _, nd := range inv {
		if nd.Class == class {
			nodes = append(nodes, nd)
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	if len(nodes) == 0 || n <= 0 {
		return Placement{}, false
	}
	if n > nodes[0].GPUs {
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
