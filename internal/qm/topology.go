package qm

import "time"

// PCIeLevel is how far apart two GPUs of one node are on the PCIe tree, in the words of
// `nvidia-smi topo -m`, nearest first.
type PCIeLevel string

// PCIe levels between two GPUs. LevelUnknown is a pair the node agent could not ask about.
const (
	LevelSelf       PCIeLevel = "X"    // the same GPU
	LevelSingle     PCIeLevel = "PIX"  // through at most one PCIe bridge
	LevelMultiple   PCIeLevel = "PXB"  // through several PCIe bridges, not the host bridge
	LevelHostBridge PCIeLevel = "PHB"  // through a PCIe host bridge (the CPU)
	LevelNUMA       PCIeLevel = "NODE" // between host bridges within one NUMA node
	LevelSystem     PCIeLevel = "SYS"  // across NUMA nodes (QPI/UPI, Infinity Fabric)
	LevelUnknown    PCIeLevel = ""
)

// Topology is how the GPUs of one node are connected, as its node agent last reported it.
type Topology struct {
	Node string
	// At is when the agent read it.
	At   time.Time
	GPUs []TopologyGPU // by index
}

// TopologyGPU is one GPU of a node and its connections to the others.
type TopologyGPU struct {
	Index int
	UUID  string
	// NUMA is the GPU's NUMA node, -1 when the system does not say (a VM, a one-socket host).
	NUMA int
	// CPUs is the CPU affinity as a list like "0-15,32-47"; empty when unknown.
	CPUs string
	// Island is the GPU's NVLink island: GPUs reachable from one another over NVLink (directly or
	// through NVSwitches) share one; a GPU without NVLink is an island of its own. Islands are
	// numbered from 0 in order of their lowest GPU index.
	Island int
	// NVLinks is the number of NVLinks to each GPU of the node, by index (0 to itself and to GPUs
	// it has no NVLink to).
	NVLinks []int
	// PCIe is the PCIe level to each GPU of the node, by index.
	PCIe []PCIeLevel
}

// SetIslands numbers the NVLink islands from the NVLink counts.
func (t *Topology) SetIslands() {
	n := len(t.GPUs)
	island := make([]int, n)
	for i := range island {
		island[i] = -1
	}
	next := 0
	for i := range n {
		if island[i] >= 0 {
			continue
		}
		island[i] = next
		stack := []int{i}
		for len(stack) > 0 {
			g := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for j, links := range t.GPUs[g].NVLinks {
				if j < n && links > 0 && island[j] < 0 {
					island[j] = next
					stack = append(stack, j)
				}
			}
		}
		next++
	}
	for i := range t.GPUs {
		t.GPUs[i].Island = island[i]
	}
}

// Islands lists the GPU indexes of each NVLink island, islands in order.
func (t Topology) Islands() [][]int {
	var out [][]int
	for _, g := range t.GPUs {
		for len(out) <= g.Island {
			out = append(out, nil)
		}
		if g.Island >= 0 {
			out[g.Island] = append(out[g.Island], g.Index)
		}
	}
	return out
}
