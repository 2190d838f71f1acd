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
	// MIGMinors are the minor numbers of the MIG device files, from the driver's mig-minors file
	// (ParseMIGMinors); a GPU in MIG mode needs them for its lines.
	MIGMinors map[string]int
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
//
// A GPU in MIG mode is never written as one whole GPU: as Slurm's AutoDetect=nvml does, each of its
// MIG devices is a GPU of its own, typed by the GPU's type and the MIG profile (a100_1g.5gb), with
// MultipleFiles= naming the parent's /dev/nvidiaN and the device files of its GPU and compute
// instances (from o.MIGMinors), the parent's Cores=, and no NVLinks. Without those device files its
// MIG devices cannot be confined, so the GPU gets a comment and no line.
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

	// The devices Slurm is told of, one per line: whole GPUs, and MIG devices.
	type device struct {
		gpu   GPUInfo
		typ   string
		files string // File=… or MultipleFiles=…
		mig   bool
	}
	var devs []device
	for _, g := range listed {
		t := o.Type
		if t == "" {
			t = GresType(g.Name)
		}
		dev := filepath.Join(o.DevDir, "nvidia"+strconv.Itoa(g.Minor))
		if !g.MIG {
			devs = append(devs, device{gpu: g, typ: t, files: "File=" + dev})
			continue
		}
		var migs []device
		missing := len(g.MIGDevices) == 0
		for _, m := range g.MIGDevices {
			gi, ok1 := o.MIGMinors[fmt.Sprintf("gpu%d/gi%d/access", g.Minor, m.GI)]
			ci, ok2 := o.MIGMinors[fmt.Sprintf("gpu%d/gi%d/ci%d/access", g.Minor, m.GI, m.CI)]
			if !ok1 || !ok2 {
				missing = true
				break
			}
			caps := filepath.Join(o.DevDir, "nvidia-caps", "nvidia-cap")
			migs = append(migs, device{gpu: g, typ: t + "_" + m.Profile(), mig: true,
				files: fmt.Sprintf("MultipleFiles=%s,%s%d,%s%d", dev, caps, gi, caps, ci)})
		}
		switch {
		case len(g.MIGDevices) == 0:
			fmt.Fprintf(w, "# GPU %d (%s) is in MIG mode with no MIG device: it is left out, not listed as a whole GPU; create its GPU and compute instances, or turn MIG off.\n", g.Index, dev)
		case missing:
			fmt.Fprintf(w, "# GPU %d (%s) is in MIG mode, but /proc/%s does not name the device files of its MIG devices: it is left out, not listed as a whole GPU; run gres-conf on the node itself (or point --proc-root at its /proc), or use AutoDetect=nvml.\n", g.Index, dev, MIGMinorsFile)
		default:
			var profiles []string
			for _, m := range migs {
				profiles = append(profiles, strings.TrimPrefix(m.typ, t+"_"))
			}
			fmt.Fprintf(w, "# GPU %d (%s) is in MIG mode: its %d MIG devices (%s) are listed as GPUs of their own, as Slurm's AutoDetect=nvml lists them, and the whole GPU is not.\n",
				g.Index, dev, len(migs), strings.Join(profiles, ", "))
			devs = append(devs, migs...)
		}
	}
	if len(devs) == 0 {
		return fmt.Errorf("none of the GPUs can be given to Slurm (MIG mode with no MIG device to list), so no gres.conf")
	}
	types := map[string]int{}
	var order []string
	for _, d := range devs {
		if types[d.typ] == 0 {
			order = append(order, d.typ)
		}
		types[d.typ]++
	}
	var gres []string
	for _, t := range order {
		gres = append(gres, fmt.Sprintf("gpu:%s:%d", t, types[t]))
	}
	fmt.Fprintf(w, "# slurm.conf needs GresTypes=gpu and Gres=%s on the node's line.\n", strings.Join(gres, ","))

	byIndex := map[int]*report.TopologyGPU{}
	for k := range topo.GPUs {
		byIndex[topo.GPUs[k].Index] = &topo.GPUs[k]
	}
	anyLink := false
	for _, d := range devs {
		if tg := byIndex[d.gpu.Index]; tg != nil && !d.mig {
			for _, p := range devs {
				if !p.mig && p.gpu.Index != d.gpu.Index && p.gpu.Index < len(tg.NVLinks) && tg.NVLinks[p.gpu.Index] > 0 {
					anyLink = true
				}
			}
		}
	}
	for i, d := range devs {
		g := d.gpu
		var b strings.Builder
		if o.Node != "" {
			fmt.Fprintf(&b, "NodeName=%s ", o.Node)
		}
		fmt.Fprintf(&b, "Name=gpu Type=%s %s", d.typ, d.files)
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
		// Slurm's Links= has one number per device of the node's gres.conf, in the lines' order;
		// a MIG device has no NVLinks.
		if anyLink {
			links := make([]string, len(devs))
			for j, p := range devs {
				n := 0
				if tg != nil && !d.mig && !p.mig && p.gpu.Index >= 0 && p.gpu.Index < len(tg.NVLinks) {
					n = tg.NVLinks[p.gpu.Index]
				}
				links[j] = strconv.Itoa(n)
				if j == i {
					links[j] = "-1"
				}
			}
			fmt.Fprintf(&b, " Links=%s", strings.Join(links, ","))
		}
		fmt.Fprintln(w, b.String())
	}
	return nil
}

// MIGMinorsFile is where, under /proc, the driver lists the minor numbers of the MIG device files
// (/dev/nvidia-caps/nvidia-capN).
const MIGMinorsFile = "driver/nvidia-caps/mig-minors"

// ParseMIGMinors reads the driver's mig-minors file: lines "gpu0/gi1/access 12" and
// "gpu0/gi1/ci0/access 13" (gpuN is the GPU's minor number), by name.
func ParseMIGMinors(b []byte) map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if n, err := strconv.Atoi(f[1]); err == nil && n >= 0 {
			out[f[0]] = n
		}
	}
	return out
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
