// Package report is the wire format between the node agent and the service: one JSON document per
// POST /api/v1/agent/reports, carrying what a node's GPUs did at one instant, which Slurm jobs and
// Kubernetes pods ran on them, and (at start, on change, or when the service asks) the node's GPU
// topology. It imports only the standard library, so both sides share it without sharing anything
// else.
package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// Version is the report format this package writes. The service refuses other versions.
const Version = 1

// Path is where the service takes reports.
const Path = "/api/v1/agent/reports"

// SentAtHeader carries the node's clock (RFC 3339) when the agent sends a report, set again on
// every attempt: a report may wait in the agent's outbox, so its At alone cannot tell the node's
// clock from the delay. The service places the report's samples on its own clock by the
// difference between this time and the moment it received the report.
const SentAtHeader = "Quartermaster-Sent-At"

// MaxBytes bounds one report's body; the service refuses larger ones with 413. Eight GPUs with a
// few processes each and the topology take about 6 KB.
const MaxBytes = 1 << 20

// MaxInterval is the longest sampling period an agent runs with (--interval): a report stands for
// at most that much time, whatever its Interval says.
const MaxInterval = 10 * time.Minute

// Report is one sample of a node's GPUs.
type Report struct {
	Version int    `json:"version"`
	Node    string `json:"node"`
	// At is when the GPUs were read, by the node's clock.
	At time.Time `json:"at"`
	// Run is a random id the agent picks each time it starts (up to 64 letters, digits, '-' or
	// '_'), and Seq counts its reports since then: together they identify a report, so that the
	// service knows one sent again (a lost answer, a proxy's retry) whatever the node's clock
	// says. A gap in Seq tells the service reports were lost. An older agent sends no run; its
	// reports are known by At.
	Run string `json:"run,omitempty"`
	Seq uint64 `json:"seq"`
	// Interval is the agent's sampling period in seconds: each sample stands for that much time.
	Interval float64 `json:"interval_s"`
	Driver   string  `json:"driver,omitempty"`
	GPUs     []GPU   `json:"gpus"`
	// TopologyHash identifies the node's topology; Topology is sent in full when it is new to the
	// service.
	TopologyHash string    `json:"topology_hash,omitempty"`
	Topology     *Topology `json:"topology,omitempty"`
}

// GPU is what one GPU did. A measurement the GPU does not support is left out (nil), never zero.
type GPU struct {
	Index int    `json:"index"`
	UUID  string `json:"uuid"`
	Name  string `json:"name,omitempty"`
	// Util is the percent of the last sample period in which a kernel ran.
	Util *float64 `json:"util,omitempty"`
	// MemUsed and MemTotal are framebuffer bytes.
	MemUsed  uint64 `json:"mem_used"`
	MemTotal uint64 `json:"mem_total"`
	// MemUnread is true when NVML could not read the memory in use this time: MemUsed is then 0
	// and says nothing, and MemTotal is what the GPU had when the agent started. (A flag beside
	// MemUsed, not a nil MemUsed, so that readers of the report that predate it are unchanged.)
	MemUnread bool `json:"mem_unread,omitempty"`
	// MemReserved is the memory the driver reserves for itself, which MemUsed leaves out, as
	// nvidia-smi does; 0 where the driver does not say (before R510: MemUsed then counts it).
	MemReserved uint64 `json:"mem_reserved,omitempty"`
	// PowerW is the board's power draw in watts; TempC the GPU temperature.
	PowerW *float64 `json:"power_w,omitempty"`
	TempC  *float64 `json:"temp_c,omitempty"`
	// XID is the last XID error the GPU reported since the agent started (0: none).
	XID *uint64 `json:"xid,omitempty"`
	// ECCUncorrected counts uncorrected ECC errors since the driver loaded.
	ECCUncorrected *uint64   `json:"ecc_uncorrected,omitempty"`
	Processes      []Process `json:"processes,omitempty"`
	// MIG lists the GPU's MIG devices when it is in MIG mode, each read on its own; the GPU's own
	// entry stays as it was (its Util is then nil: NVML has no utilization for a GPU in MIG mode),
	// so a reader that predates MIG reads the report as before.
	MIG []MIGDevice `json:"mig,omitempty"`
}

// MIGDevice is what one MIG device (a compute instance in a GPU instance) of a GPU did. As for a
// GPU, a measurement NVML does not give is left out (nil), never zero.
type MIGDevice struct {
	UUID string `json:"uuid"`
	// GI and CI are the GPU instance's and the compute instance's ids (nvidia-smi's GI ID, CI ID).
	GI int `json:"gi"`
	CI int `json:"ci"`
	// Profile is the MIG profile as nvidia-smi names it ("1g.10gb", "3g.40gb").
	Profile string `json:"profile"`
	// Util is the MIG device's utilization, percent, where NVML gives one. NVML's utilization
	// call gives none (NOT_SUPPORTED) on the A100 and H100; on an H100 and later GPUs its GPM
	// gives the graphics engine activity of the MIG device's GPU instance since the agent's last
	// reading (InstanceUtil), from the second reading of the instance on. The A100 has no GPM.
	Util *float64 `json:"util,omitempty"`
	// InstanceUtil says Util is the activity of the whole GPU instance (GPM's), which its compute
	// instances share, not the compute instance's own.
	InstanceUtil bool `json:"gi_util,omitempty"`
	// MemUsed and MemTotal are the GPU instance's framebuffer bytes; MemUsed is nil when NVML did
	// not give it.
	MemUsed  *uint64 `json:"mem_used,omitempty"`
	MemTotal uint64  `json:"mem_total"`
	// MemReserved is what the driver reserves of it (see GPU.MemReserved).
	MemReserved uint64 `json:"mem_reserved,omitempty"`
	// Processes are the processes on this MIG device; they are also in the GPU's.
	Processes []Process `json:"processes,omitempty"`
}

// Process is a process on a GPU (a compute process, an MPS client or a graphics process) and the
// job or pod it belongs to, read from its cgroup.
type Process struct {
	PID uint32 `json:"pid"`
	// MemUsed is the process's GPU memory in bytes; 0 (left out) when NVML does not give it.
	MemUsed uint64 `json:"mem_used,omitempty"`
	// Job is the Slurm job id (cgroup path …/job_<id>/…); Pod the Kubernetes pod UID
	// (…/pod<uid>/…). Both are empty for a process of neither.
	Job string `json:"job,omitempty"`
	Pod string `json:"pod,omitempty"`
}

// Topology is how a node's GPUs are connected.
type Topology struct {
	GPUs []TopologyGPU `json:"gpus"`
}

// TopologyGPU is one GPU's place in the node.
type TopologyGPU struct {
	Index int    `json:"index"`
	UUID  string `json:"uuid"`
	BusID string `json:"bus_id,omitempty"`
	Minor int    `json:"minor"`
	// NUMA is the GPU's NUMA node; nil when the system does not say.
	NUMA *int `json:"numa,omitempty"`
	// CPUs is the CPU affinity, like "0-15,32-47".
	CPUs string `json:"cpus,omitempty"`
	// NVLinks is the number of NVLinks to each GPU, by index.
	NVLinks []int `json:"nvlinks"`
	// PCIe is the PCIe level to each GPU, by index: X, PIX, PXB, PHB, NODE, SYS, or "" unknown.
	PCIe []string `json:"pcie"`
	// Lost says why the agent could not read this GPU when it started (it fell off the bus, or
	// NVML failed for it), or why its last sample found it lost while the agent runs
	// (ERROR_GPU_IS_LOST); the GPU keeps its place, its UUID may be empty, it has no links, and no
	// report lists it.
	Lost string `json:"lost,omitempty"`
}

// Hash identifies a topology: equal topologies hash alike.
func (t *Topology) Hash() string {
	if t == nil {
		return ""
	}
	b, _ := json.Marshal(t)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// Response is the service's answer to an accepted or ignored report.
type Response struct {
	// Accepted is false when the service ignored the report (Ignored says why); the agent sends
	// it no more either way.
	Accepted bool   `json:"accepted"`
	Ignored  string `json:"ignored,omitempty"`
	// TopologyWanted asks the agent to send the full topology with its next report.
	TopologyWanted bool `json:"topology_wanted,omitempty"`
	// Skipped counts the report's parts the service did not use, by reason (unknown_gpu,
	// unknown_job, other_node).
	Skipped map[string]int `json:"skipped,omitempty"`
	// ClockSkew is how far the node's clock is ahead of the service's, in seconds (negative:
	// behind), as the service measured it from the report's SentAtHeader when it came in (the
	// time on the way counts as behind); absent when the report had no such header, when the
	// service ignored the report (replayed, too_old: its header may be that of when it was first
	// sent), or the service measures none.
	ClockSkew *float64 `json:"clock_skew_s,omitempty"`
}

// MaxClockSkew is how far a node's clock may be off the service's before each side says so: the
// service counts such a report as clock_off and logs it, and the agent logs it. A report with its
// SentAtHeader is placed on the service's clock however far off the node's clock is; one without
// is refused when it is dated more than this ahead.
const MaxClockSkew = 2 * time.Minute

// HowFar says how far off a clock skew of secs seconds is, without its sign: in whole years from
// a year on (a time.Duration holds no more than about 292 years, and hours say little past a few
// days), else as a duration rounded to round: "7972 years", "1 year", "10m0s".
func HowFar(secs float64, round time.Duration) string {
	secs = math.Abs(secs)
	const year = 365.2425 * 24 * 60 * 60 // seconds, the mean Gregorian year
	switch y := math.Floor(secs / year); {
	case y == 1:
		return "1 year"
	case y > 1:
		return fmt.Sprintf("%.0f years", y)
	}
	return time.Duration(secs * float64(time.Second)).Round(round).String()
}

// Skew is HowFar with a minus in front for a clock behind (secs negative): "-6m40s", "7972 years".
func Skew(secs float64, round time.Duration) string {
	if secs < 0 {
		return "-" + HowFar(secs, round)
	}
	return HowFar(secs, round)
}

// Error is the service's answer to a refused report.
type Error struct {
	Error string `json:"error"`
}
