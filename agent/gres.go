package agent

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/acme/quartermaster/agent/report"
)

// GresOptions shape the gres.conf lines.
type GresOptions struct {
	// Node, when set, starts every line with NodeName=Node (for a gres.conf shared by nodes).
	Node string
	// Type overrides the GPU type (default: from the model name, "NVIDIA H100 80GB HBM3" -> h100).
	Type string
	// DevDir is where the device files are (default /dev).
	DevDir string
	// Cores maps CPUs to Slurm's core indexes; without it no Cores= is written.
	Cores *CoreMap
}

var gresTypeRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)

// GresType is the Slurm GPU type for a model name, lower case: the model number after "NVIDIA"
// (or "Tesla"), up to a dash ("NVIDIA A100-SXM4-40GB" -> a100, "NVIDIA L40S" -> l40s, "NVIDIA H100
// 80GB HBM3" -> h100; go-nvml's mock GPUs are named "Mock NVIDIA …"). A product line's words
// (RTX, Quadro, GeForce, TITAN, PRO) stay in front, joined by "_", and a bare model number takes the
// words after it that name its generation or edition, so two models never share a type:
// "NVIDIA RTX A6000" -> rtx_a6000, "NVIDIA RTX 6000 Ada Generation" -> rtx_6000_ada,
// "Quadro RTX 8000" -> quadro_rtx_8000.
func GresType(model string) string {
	f := strings.Fields(strings.ToLower(model))
	for len(f) > 1 && (f[0] == "nvidia" || f[0] == "tesla" || f[0] == "mock") {
		f = f[1:]
	}
	var parts []string
	for len(f) > 0 && gresLines[f[0]] {
		parts = append(parts, f[0])
		f = f[1:]
	}
	if len(f) > 0 {
		m := strings.SplitN(f[0], "-", 2)[0]
		parts = append(parts, m)
		if strings.Trim(m, "0123456789") == "" {
			// "RTX 6000 Ada Generation", "RTX PRO 6000 Blackwell Server Edition": the words after
			// a bare number tell the model apart.
			for _, w := range f[1:] {
				if strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" || gresFiller[w] {
					break
				}
				parts = append(parts, w)
			}
		}
	}
	t := strings.Join(parts, "_")
	if t == "" || !gresTypeRe.MatchString(t) {
		return "gpu"
	}
	return t
}

// gresLines are the product lines' words that come before a model number.
var gresLines = map[string]bool{"rtx": true, "quadro": true, "geforce": true, "titan": true, "pro": true}

// gresFiller are words after a model number that tell no model apart.
var gresFiller = map[string]bool{"generation": true, "edition": true, "gpu": true, "graphics": true}

// WriteGresConf writes one gres.conf line per GPU: Name=gpu Type=… File=/dev/nvidiaN (N the GPU's
// minor number, which is not always its NVML index), with Cores= from the GPU's CPU affinity (left
// out when it is every core) and Links= with the number of NVLinks to every GPU listed (-1 for
// itself; left out when there are none), preceded by comments saying what slurm.conf needs. A GPU
// lost at start gets a comment instead of a line, and the other GPUs keep their files and links.
func WriteGresConf(w io.Writer, gpus []GPUInfo, topo report.Topology, o GresOptions) error {
	if len(gpus) == 0 {
		return fmt.Errorf("no GPUs, so no gres.conf")
	}
	if o.DevDir == "" {
		o.DevDir = "/dev"
	}
	if o.Type != "" && !gresTypeRe.MatchString(o.Type) {
		return fmt.Errorf("%q is not a GRES type; use lower-case letters and digits, e.g. --type a100", o.Type)
	}
	listed := Readable(gpus)
	if len(listed) == 0 {
		return fmt.Errorf("none of the %d GPUs can be read, so no gres.conf", len(gpus))
	}
	types := map[string]int{}
	var order []string
	typeOf := make([]string, len(listed))
	for i, g := range listed {
		t := o.Type
		if t == "" {
			t = GresType(g.Name)
		}
		typeOf[i] = t
		if types[t] == 0 {
			order = append(order, t)
		}
		types[t]++
	}
	var gres []string
	for _, t := range order {
		gres = append(gres, fmt.Sprintf("gpu:%s:%d", t, types[t]))
	}
	byIndex := map[int]*report.TopologyGPU{}
	for k := range topo.GPUs {
		byIndex[topo.GPUs[k].Index] = &topo.GPUs[k]
	}
	anyLink := false
	for _, tg := range topo.GPUs {
		for _, n := range tg.NVLinks {
			anyLink = anyLink || n > 0
		}
	}
	name := "this node"
	if o.Node != "" {
		name = o.Node
	}
	models := map[string]int{}
	var modelOrder []string
	for _, g := range listed {
		if models[g.Name] == 0 {
			modelOrder = append(modelOrder, g.Name)
		}
		models[g.Name]++
	}
	var have []string
	for _, m := range modelOrder {
		have = append(have, fmt.Sprintf("%d x %s", models[m], m))
	}
	fmt.Fprintf(w, "# gres.conf for %s, from NVML by quartermaster-agent: %s.\n", name, strings.Join(have, ", "))
	for _, g := range gpus {
		if g.Lost != "" {
			fmt.Fprintf(w, "# GPU %d (%s) is left out: NVML cannot read it (%s); the Gres= below counts only the GPUs listed.\n",
				g.Index, lostName(g), g.Lost)
		}
	}
	fmt.Fprintf(w, "# slurm.conf needs GresTypes=gpu and Gres=%s on the node's line.\n", strings.Join(gres, ","))
	for i, g := range listed {
		var b strings.Builder
		if o.Node != "" {
			fmt.Fprintf(&b, "NodeName=%s ", o.Node)
		}
		fmt.Fprintf(&b, "Name=gpu Type=%s File=%s", typeOf[i], filepath.Join(o.DevDir, "nvidia"+strconv.Itoa(g.Minor)))
		tg := byIndex[g.Index]
		if tg != nil && o.Cores != nil && tg.CPUs != "" {
			cpus, err := ParseCPUs(tg.CPUs)
			if err != nil {
				return fmt.Errorf("GPU %d: %w", g.Index, err)
			}
			if cores, all := o.Cores.Cores(cpus); len(cores) > 0 && !all {
				fmt.Fprintf(&b, " Cores=%s", FormatCPUs(cores))
			}
		}
		// Slurm's Links= has one number per GPU of the node's gres.conf, in the lines' order: the
		// GPUs listed, by their NVML index into the topology.
		if tg != nil && anyLink {
			links := make([]string, 0, len(listed))
			for _, peer := range listed {
				switch {
				case peer.Index == g.Index:
					links = append(links, "-1")
				case peer.Index >= 0 && peer.Index < len(tg.NVLinks):
					links = append(links, strconv.Itoa(tg.NVLinks[peer.Index]))
				default:
					links = append(links, "0")
				}
			}
			fmt.Fprintf(&b, " Links=%s", strings.Join(links, ","))
		}
		fmt.Fprintln(w, b.String())
	}
	return nil
}

// lostName names a lost GPU by what NVML still told of it.
func lostName(g GPUInfo) string {
	var parts []string
	for _, p := range []string{g.UUID, g.BusID} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "no UUID or bus id"
	}
	return strings.Join(parts, ", ")
}

// WriteTopology prints the topology as `nvidia-smi topo -m` does: the connection between every
// pair of GPUs (NV# for # bonded NVLinks, else the PCIe level), then each GPU's CPU and NUMA
// affinity, and the legend. GPUs are named by their NVML index; a GPU lost at start has a row of
// N/A and a line under the matrix saying why.
func WriteTopology(w io.Writer, topo report.Topology) {
	fmt.Fprint(w, "\t")
	for _, g := range topo.GPUs {
		fmt.Fprintf(w, "GPU%d\t", g.Index)
	}
	fmt.Fprintln(w, "CPU Affinity\tNUMA Affinity")
	var lost []string
	for _, g := range topo.GPUs {
		fmt.Fprintf(w, "GPU%d\t", g.Index)
		if g.Lost != "" {
			lost = append(lost, fmt.Sprintf("GPU%d cannot be read: %s", g.Index, g.Lost))
		}
		for _, peer := range topo.GPUs {
			j := peer.Index
			cell := "N/A"
			switch {
			case j == g.Index:
				cell = " X "
			case g.Lost != "" || peer.Lost != "":
			case j >= 0 && j < len(g.NVLinks) && g.NVLinks[j] > 0:
				cell = fmt.Sprintf("NV%d", g.NVLinks[j])
			case j >= 0 && j < len(g.PCIe) && g.PCIe[j] != "":
				cell = g.PCIe[j]
			}
			fmt.Fprintf(w, "%s\t", cell)
		}
		cpus, numa := g.CPUs, "N/A"
		if cpus == "" {
			cpus = "N/A"
		}
		if g.NUMA != nil {
			numa = strconv.Itoa(*g.NUMA)
		}
		fmt.Fprintf(w, "%s\t%s\n", cpus, numa)
	}
	if len(lost) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(lost, "\n"))
	}
	fmt.Fprint(w, `
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
`)
}
