package ingest

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/acme/quartermaster/agent/report"
)

// Bounds on what one report may hold; a report beyond them is refused as malformed.
const (
	maxGPUs         = 64
	maxProcesses    = 4096 // per GPU
	maxMIG          = 32   // MIG devices per GPU (an A100 or H100 has at most 7)
	maxString       = 256
	maxIntervalSecs = 3600
)

var (
	jobRe  = regexp.MustCompile(`^[0-9]{1,20}$`)
	runRe  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	podRe  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	pcieOK = map[string]bool{"": true, "X": true, "PIX": true, "PXB": true, "PHB": true, "NODE": true, "SYS": true}
)

// Decode reads and checks one report. Its error is one sentence saying what is wrong, fit to send
// back to the agent.
func Decode(body []byte) (report.Report, error) {
	var r report.Report
	if err := json.Unmarshal(body, &r); err != nil {
		return report.Report{}, fmt.Errorf("the report is not valid JSON of the report format (%v)", err)
	}
	if r.Version != report.Version {
		return report.Report{}, fmt.Errorf("the report has version %d, but this service reads version %d; update the agent or the service", r.Version, report.Version)
	}
	if p := report.NodeNameProblem(r.Node); p != "" {
		return report.Report{}, fmt.Errorf("the report's node: %s; the agent's --node names the node as the scheduler knows it, e.g. --node gpu-01", p)
	}
	if r.At.IsZero() || r.At.Year() < 2000 || r.At.Year() > 9999 {
		return report.Report{}, fmt.Errorf("the report has no time (at)")
	}
	if r.Run != "" && !runRe.MatchString(r.Run) {
		return report.Report{}, fmt.Errorf("the report's run %q is not up to 64 letters, digits, '-' or '_'; the agent picks one like \"9f2c4e1a7b3d5e60\" when it starts", clip(r.Run))
	}
	if !(r.Interval > 0 && r.Interval <= maxIntervalSecs) {
		return report.Report{}, fmt.Errorf("the report's interval_s %v is not between 0 and %d seconds", r.Interval, maxIntervalSecs)
	}
	if len(r.GPUs) > maxGPUs {
		return report.Report{}, fmt.Errorf("the report lists %d GPUs; a node has at most %d", len(r.GPUs), maxGPUs)
	}
	if len(r.Driver) > maxString || len(r.TopologyHash) > 64 {
		return report.Report{}, fmt.Errorf("the report's driver or topology_hash is too long")
	}
	seen := map[int]bool{}
	uuids := map[string]bool{}
	for _, g := range r.GPUs {
		switch {
		case g.Index < 0 || g.Index >= maxGPUs || seen[g.Index]:
			return report.Report{}, fmt.Errorf("the report lists GPU index %d twice or out of range", g.Index)
		case g.UUID == "" || len(g.UUID) > maxString || len(g.Name) > maxString:
			return report.Report{}, fmt.Errorf("GPU %d has no UUID, or a name or UUID too long", g.Index)
		case uuids[g.UUID]:
			return report.Report{}, fmt.Errorf("the report lists GPU %q twice, the second time as GPU %d", clip(g.UUID), g.Index)
		case g.Util != nil && !(*g.Util >= 0 && *g.Util <= 100):
			return report.Report{}, fmt.Errorf("GPU %d's utilization %v is not a percentage", g.Index, *g.Util)
		case badFloat(g.PowerW) || badFloat(g.TempC):
			return report.Report{}, fmt.Errorf("GPU %d's power or temperature is not a number", g.Index)
		case len(g.Processes) > maxProcesses:
			return report.Report{}, fmt.Errorf("GPU %d lists %d processes; at most %d are read", g.Index, len(g.Processes), maxProcesses)
		}
		seen[g.Index] = true
		uuids[g.UUID] = true
		if err := checkProcesses(g.Index, g.Processes); err != nil {
			return report.Report{}, err
		}
		if len(g.MIG) > maxMIG {
			return report.Report{}, fmt.Errorf("GPU %d lists %d MIG devices; a GPU has at most %d", g.Index, len(g.MIG), maxMIG)
		}
		for _, m := range g.MIG {
			switch {
			case m.UUID == "" || len(m.UUID) > maxString || len(m.Profile) > maxString:
				return report.Report{}, fmt.Errorf("a MIG device of GPU %d has no UUID, or a profile or UUID too long", g.Index)
			case uuids[m.UUID]:
				return report.Report{}, fmt.Errorf("the report lists device %q twice, the second time as a MIG device of GPU %d", clip(m.UUID), g.Index)
			case m.GI < 0 || m.CI < 0:
				return report.Report{}, fmt.Errorf("MIG device %q of GPU %d has a negative GPU or compute instance id", clip(m.UUID), g.Index)
			case m.Util != nil && !(*m.Util >= 0 && *m.Util <= 100):
				return report.Report{}, fmt.Errorf("MIG device %q of GPU %d: utilization %v is not a percentage", clip(m.UUID), g.Index, *m.Util)
			case len(m.Processes) > maxProcesses:
				return report.Report{}, fmt.Errorf("MIG device %q of GPU %d lists %d processes; at most %d are read", clip(m.UUID), g.Index, len(m.Processes), maxProcesses)
			}
			uuids[m.UUID] = true
			if err := checkProcesses(g.Index, m.Processes); err != nil {
				return report.Report{}, err
			}
		}
	}
	if t := r.Topology; t != nil {
		n := len(t.GPUs)
		if n > maxGPUs {
			return report.Report{}, fmt.Errorf("the topology lists %d GPUs; a node has at most %d", n, maxGPUs)
		}
		clear(uuids)
		for i, g := range t.GPUs {
			switch {
			case g.Index != i:
				return report.Report{}, fmt.Errorf("the topology lists GPU %d in place %d; it lists GPUs in index order", g.Index, i)
			case (g.UUID == "" && g.Lost == "") || len(g.UUID) > maxString || len(g.BusID) > maxString || len(g.CPUs) > 4*maxString || len(g.Lost) > maxString:
				return report.Report{}, fmt.Errorf("topology GPU %d has no UUID, or a field too long", i)
			case g.UUID != "" && uuids[g.UUID]:
				return report.Report{}, fmt.Errorf("the topology lists GPU %q twice, the second time as GPU %d", clip(g.UUID), i)
			case len(g.NVLinks) != n || len(g.PCIe) != n:
				return report.Report{}, fmt.Errorf("topology GPU %d must list NVLinks and PCIe levels to all %d GPUs", i, n)
			case g.NUMA != nil && (*g.NUMA < 0 || *g.NUMA > 1024):
				return report.Report{}, fmt.Errorf("topology GPU %d has NUMA node %d", i, *g.NUMA)
			}
			uuids[g.UUID] = true
			for j := range n {
				if g.NVLinks[j] < 0 || g.NVLinks[j] > 64 || !pcieOK[g.PCIe[j]] {
					return report.Report{}, fmt.Errorf("topology GPU %d to GPU %d: %d NVLinks or PCIe level %q is not possible", i, j, g.NVLinks[j], clip(g.PCIe[j]))
				}
			}
		}
	}
	return r, nil
}

// checkProcesses says which job id or pod UID of GPU i's processes is not one.
func checkProcesses(i int, ps []report.Process) error {
	for _, p := range ps {
		if p.Job != "" && !jobRe.MatchString(p.Job) {
			return fmt.Errorf("GPU %d: %q is not a Slurm job id", i, clip(p.Job))
		}
		if p.Pod != "" && !podRe.MatchString(p.Pod) {
			return fmt.Errorf("GPU %d: %q is not a pod UID", i, clip(p.Pod))
		}
	}
	return nil
}

func badFloat(f *float64) bool {
	return f != nil && (math.IsNaN(*f) || math.IsInf(*f, 0) || *f < -1000 || *f > 1e6)
}

// clip shortens a value echoed in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// stamp formats a time for a message.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
