package ingest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// NodeInventory is what the scheduler's inventory (Slurm's, Kubernetes' or the policy's simulated
// nodes) holds of one node, for its agent's reports to be checked against.
type NodeInventory struct {
	// GPUs is the node's GPUs, all its classes together.
	GPUs int
	// Classes are the node's classes, by name.
	Classes []InventoryClass
	// Named, for a node the inventory lacks, is the name of the inventory's node of the same
	// short name (h100-02 for h100-02.gpu.acme.example, or the other way round): the name the
	// agent should report as. Empty when there is none.
	Named string
	// Nearest, for a node the inventory lacks and Named does not name, is the inventory's nodes
	// nearest to its name (NearestNodes): the ones an operator may have meant.
	Nearest []string
}

// LookupInventory is byNode's (NodeInventories) node of that name, ignoring A-Z case; for a name
// it lacks, a NodeInventory without classes, naming (Named) the one node of the same short name
// (the name up to its first '.') where it has one.
func LookupInventory(byNode map[string]*NodeInventory, node string) *NodeInventory {
	name := strings.ToLower(node)
	if ni, ok := byNode[name]; ok {
		return ni
	}
	short, _, _ := strings.Cut(name, ".")
	named := ""
	for n := range byNode {
		if s, _, _ := strings.Cut(n, "."); s == short {
			if named != "" {
				named = "" // two of that short name: which one cannot be told
				break
			}
			named = n
		}
	}
	if named != "" {
		return &NodeInventory{Named: named}
	}
	return &NodeInventory{Nearest: NearestNodes(node, slices.Collect(maps.Keys(byNode)))}
}

// maxNearestNodes is how many of the nearest nodes NearestNodes names.
const maxNearestNodes = 3

// NearestNodes is the nodes of known nearest to node, a name known lacks (ignoring A-Z case), in
// order and at most three: those of the same short name (h100-02 for h100-02.gpu.example, or the
// other way round), else those the fewest letters off. None where known has node, or is empty.
func NearestNodes(node string, known []string) []string {
	lower := strings.ToLower(node)
	short, _, _ := strings.Cut(lower, ".")
	var nearest []string
	for _, k := range known {
		kl := strings.ToLower(k)
		if kl == lower {
			return nil
		}
		if ks, _, _ := strings.Cut(kl, "."); ks == short {
			nearest = append(nearest, k)
		}
	}
	if len(nearest) == 0 {
		best := -1
		for _, k := range known {
			d := policy.EditDistance(lower, strings.ToLower(k))
			switch {
			case best < 0 || d < best:
				best, nearest = d, []string{k}
			case d == best:
				nearest = append(nearest, k)
			}
		}
	}
	sort.Strings(nearest)
	nearest = slices.Compact(nearest)
	if len(nearest) > maxNearestNodes {
		nearest = nearest[:maxNearestNodes]
	}
	return nearest
}

// OneOf words names as a choice: "a", "a or b", "a, b or c".
func OneOf(names []string) string {
	if n := len(names); n > 1 {
		return strings.Join(names[:n-1], ", ") + " or " + names[n-1]
	}
	return strings.Join(names, "")
}

// InventoryClass is one class's part of a node.
type InventoryClass struct {
	Name string
	// SKU is the class's SKU as the policy names it ("L40S", "H100-SXM5"); "" where it names none.
	SKU  string
	GPUs int
}

// NodeInventories gathers the inventory's nodes by name in lower case (node names match ignoring
// A-Z case). sku gives a class's SKU; shares gives what a class's GPUs are counted as on a node
// (Slurm's GRES, Kubernetes' resource): two classes that share it on one node offer the same
// GPUs, so they count once, not twice.
func NodeInventories(inv []qm.Node, sku, shares func(class string) string) map[string]*NodeInventory {
	out := map[string]*NodeInventory{}
	held := map[string]map[string]int{} // node -> shared key -> GPUs
	for _, n := range inv {
		name := strings.ToLower(n.Name)
		ni := out[name]
		if ni == nil {
			ni = &NodeInventory{}
			out[name] = ni
			held[name] = map[string]int{}
		}
		ni.Classes = append(ni.Classes, InventoryClass{Name: n.Class, SKU: sku(n.Class), GPUs: n.GPUs})
		key := shares(n.Class)
		held[name][key] = max(held[name][key], n.GPUs)
	}
	for name, ni := range out {
		for _, g := range held[name] {
			ni.GPUs += g
		}
	}
	return out
}

// inventoryMismatch is what differs between a node's agent and the scheduler's inventory: what the
// agent reports, what the inventory holds, and what to check. The zero value: nothing differs.
type inventoryMismatch struct {
	agent, inventory, check string
}

func (m inventoryMismatch) String() string {
	if m == (inventoryMismatch{}) {
		return ""
	}
	return fmt.Sprintf("its agent reports %s, and the scheduler's inventory holds %s; %s", m.agent, m.inventory, m.check)
}

// compareInventory compares what a node's agent reports with what the inventory holds of the node.
// counted is the GPUs of the node's topology (those the driver counts, a lost one too: a GPU lost
// since is another matter, told of lease by lease); 0 where the service has no topology of the
// node. units is the GPUs and MIG devices the report shows, which a scheduler that offers MIG
// devices counts instead. A GPU's model matches a class's SKU as modelMatches says; a class
// without an SKU, or whose SKU names no model, takes any.
func compareInventory(inv *NodeInventory, counted, units int, gpus []report.GPU) inventoryMismatch {
	var names []string
	for _, g := range gpus {
		if g.Name != "" && !slices.Contains(names, g.Name) {
			names = append(names, g.Name)
		}
	}
	slices.Sort(names)
	countOff := counted > 0 && counted != inv.GPUs && units != inv.GPUs
	var wrongClasses []string
	modelOff := false
	if len(names) > 0 {
		// Each model the agent reports is some class's on the node…
		for _, n := range names {
			if !slices.ContainsFunc(inv.Classes, func(c InventoryClass) bool { return !namesModel(c.SKU) || modelMatches(c.SKU, n) }) {
				modelOff = true
			}
		}
		// …and each class's SKU is among them.
		for _, c := range inv.Classes {
			if namesModel(c.SKU) && !slices.ContainsFunc(names, func(n string) bool { return modelMatches(c.SKU, n) }) {
				modelOff = true
			}
		}
		if modelOff {
			for _, c := range inv.Classes {
				if namesModel(c.SKU) && !slices.Contains(wrongClasses, c.Name) {
					wrongClasses = append(wrongClasses, c.Name)
				}
			}
		}
	}
	if !countOff && !modelOff {
		return inventoryMismatch{}
	}
	agent := "GPUs"
	switch {
	case counted == 1:
		agent = "1 GPU"
	case counted > 0:
		agent = fmt.Sprintf("%d GPUs", counted)
	}
	if len(names) > 0 {
		agent += " (" + strings.Join(names, ", ") + ")"
	}
	held := make([]string, 0, len(inv.Classes))
	for _, c := range inv.Classes {
		s := fmt.Sprintf("class %s: %d", c.Name, c.GPUs)
		if c.SKU != "" {
			s += " × " + c.SKU
		}
		held = append(held, s)
	}
	inventory := fmt.Sprintf("%d GPUs (%s)", inv.GPUs, strings.Join(held, ", "))
	if inv.GPUs == 1 {
		inventory = fmt.Sprintf("1 GPU (%s)", strings.Join(held, ", "))
	}
	check := "check that the agent's --node (QM_NODE) is the name the scheduler knows this machine by, or, if it is"
	switch {
	case modelOff:
		check += fmt.Sprintf(", the policy's sku of class %s", strings.Join(wrongClasses, " and "))
	default:
		check += ", that the scheduler counts the GPUs nvidia-smi lists on it"
	}
	return inventoryMismatch{agent: agent, inventory: inventory, check: check}
}

// modelTokens are the words of a GPU model's name in lower case, split at anything but letters
// and digits: "NVIDIA A100-SXM4-40GB" is nvidia, a100, sxm4, 40gb.
func modelTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// modelFamily is the word of a model's name that says which GPU it is: the first with a digit in
// it, after the word of letters before it where it is all digits ("RTX 6000 Ada" is rtx6000,
// "NVIDIA H100 80GB HBM3" h100, "Mock NVIDIA A100-SXM4-40GB" a100); "" where no word has a digit.
func modelFamily(tokens []string) string {
	for k, t := range tokens {
		if !strings.ContainsFunc(t, unicode.IsDigit) {
			continue
		}
		if k > 0 && !strings.ContainsFunc(t, unicode.IsLetter) && !strings.ContainsFunc(tokens[k-1], unicode.IsDigit) {
			return tokens[k-1] + t
		}
		return t
	}
	return ""
}

// namesModel is whether a policy's SKU names a GPU model that NVML's names can be checked against:
// a word of it has a digit ("L40S", "H100-SXM5"); "" or "Hopper" does not.
func namesModel(sku string) bool { return modelFamily(modelTokens(sku)) != "" }

// modelMatches is whether NVML's name of a GPU (name: "NVIDIA L40S", "NVIDIA H100 80GB HBM3",
// "Mock NVIDIA A100-SXM4-40GB") is the model a policy's SKU names ("L40S", "H100-SXM5", "A100
// 80GB"), leniently: every word of the SKU is in the name, or both say the same GPU (their
// modelFamily is the same; "H100-SXM5" is the H100 that NVML calls "NVIDIA H100 80GB HBM3"). The
// words are compared whole, so "A10" is not an "A100" nor "L4" an "L40S".
func modelMatches(sku, name string) bool {
	s, n := modelTokens(sku), modelTokens(name)
	if len(s) == 0 {
		return true
	}
	if f := modelFamily(s); f != "" && f == modelFamily(n) {
		return true
	}
	for _, t := range s {
		if !slices.Contains(n, t) {
			return false
		}
	}
	return true
}

// ModelMatches says whether NVML's name of a GPU is the model a policy's SKU names, as the service
// compares them when it checks a node's agent against the scheduler's inventory (docs/agent.md):
// true for an SKU that names no model.
func ModelMatches(sku, name string) bool { return !namesModel(sku) || modelMatches(sku, name) }

// checkInventory compares an accepted report of a node with what the scheduler's inventory holds
// of the node, logs a warning once when they differ (again when what differs changes, or once it
// was mended and comes back) and once when they match again, and records it for `agent-token
// list` and /metrics. A report is never refused for it.
func (i *Ingest) checkInventory(ctx context.Context, r report.Report) {
	if i.cfg.Inventory == nil {
		return
	}
	inv := i.cfg.Inventory(r.Node)
	if inv == nil {
		return // the scheduler's inventory is not read yet
	}
	checked := len(inv.Classes) > 0
	var m inventoryMismatch
	if !checked && inv.Named != "" {
		// Not a node the scheduler knows, but one of its nodes has that short name: the agent was
		// given the other spelling (a fully qualified name where the scheduler's is short, or the
		// other way round), and no lease there is ever covered by its reports.
		checked = true
		m = inventoryMismatch{agent: "as node " + r.Node, inventory: "no node of that name, but one named " + inv.Named,
			check: fmt.Sprintf("start the agent with --node %s (QM_NODE) and a token for that name (quartermaster agent-token create %s, then quartermaster agent-token revoke %s), as its reports cover no lease otherwise",
				inv.Named, inv.Named, r.Node)}
	} else if checked {
		units := 0
		for _, g := range r.GPUs {
			units += max(1, len(g.MIG))
		}
		m = compareInventory(inv, i.topologyCount(r.Node), units, r.GPUs)
	}
	state := nodeInventoryState{checked: checked, mismatch: m.String()}
	i.invMu.Lock()
	last, known := i.invState[strings.ToLower(r.Node)]
	i.invMu.Unlock()
	if known && last == state {
		return
	}
	if err := i.cfg.Store.SetAgentInventoryMismatch(ctx, r.Node, state.checked, state.mismatch); err != nil {
		i.log.Warn("recording whether a node's agent matches the scheduler's inventory failed; will retry at its next report", "node", r.Node, "err", err)
		return
	}
	i.invMu.Lock()
	i.invState[strings.ToLower(r.Node)] = state
	i.invMu.Unlock()
	switch {
	case state.mismatch != "":
		i.log.Warn("a node's agent does not report the GPUs the scheduler's inventory holds for the node; its reports are taken, but its topology is not used for placement and idle reclaim may judge its leases from other GPUs than theirs",
			"node", r.Node, "agent", m.agent, "inventory", m.inventory, "check", m.check)
	case known && last.mismatch != "":
		i.log.Info("a node's agent reports the GPUs the scheduler's inventory holds for the node again", "node", r.Node, "was", last.mismatch)
	case !known && !checked && len(inv.Nearest) > 0:
		// A node the scheduler has never listed since the service started, and none of its short
		// name: most likely a mistyped --node. (One it listed before and no longer does is cordoned
		// or drained, and says nothing.)
		meant, name := OneOf(inv.Nearest), "NAME"
		if len(inv.Nearest) == 1 {
			name = inv.Nearest[0]
		}
		i.log.Warn("a node's agent reports as a node the scheduler's inventory does not list; its reports are taken, but cover no lease until the scheduler knows the node",
			"node", r.Node, "nearest", meant,
			"check", fmt.Sprintf("did you mean %s? If so, start the agent with --node %s (QM_NODE) and a token for that name (quartermaster agent-token create %s, then quartermaster agent-token revoke %s); if not, add the node to the scheduler",
				meant, name, name, r.Node))
	}
}

// nodeInventoryState is what the service last recorded of a node's agent against the inventory.
type nodeInventoryState struct {
	checked  bool
	mismatch string
}

// topologyCount is how many GPUs the node's topology, as the service last took it, lists (a lost
// one too); 0 where it has none.
func (i *Ingest) topologyCount(node string) int {
	i.topoMu.Lock()
	defer i.topoMu.Unlock()
	return i.topos[node].count
}
