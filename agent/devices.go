package agent

import (
	"context"
	"fmt"

	"github.com/acme/quartermaster/agent/report"
)

// Devices reads a node's GPUs. agent/nvml implements it over NVML: the machine's driver, or one of
// go-nvml's mock DGX servers completed by its fake.
type Devices interface {
	// Driver is the driver version.
	Driver() string
	// GPUs lists every GPU the driver counts, by NVML index, with what does not change while the
	// agent runs; one the agent could not read at start is in the list, marked Lost, until a sample
	// reads it.
	GPUs() []GPUInfo
	// Sample reads every GPU now. Processes carry their PIDs; the agent finds their jobs. A GPU lost
	// at start is tried again, and sampled once it reads.
	Sample(ctx context.Context) ([]report.GPU, error)
	// Topology reads how the GPUs are connected.
	Topology(ctx context.Context) (report.Topology, error)
	Close() error
}

// GPUInfo is what does not change about a GPU.
type GPUInfo struct {
	// Index is the GPU's NVML index (nvidia-smi's GPU number), never a position in a list.
	Index    int
	UUID     string
	Name     string
	BusID    string
	Minor    int // /dev/nvidiaN
	MemTotal uint64
	// Lost says why the GPU could not be read when the agent started (it fell off the bus, XID
	// 79, or NVML failed for it); empty for a GPU the agent reads, also one lost at start that a
	// sample has read since. A lost GPU is in no sample, metric or gres.conf line, and the other
	// GPUs keep their numbers.
	Lost string
	// MIG is true when the GPU is in MIG mode; MIGDevices are then its MIG devices (one per
	// compute instance), which Slurm schedules instead of the whole GPU.
	MIG        bool
	MIGDevices []MIGDevice
}

// MIGDevice is one MIG device of a GPU in MIG mode: a compute instance in a GPU instance.
type MIGDevice struct {
	UUID string
	// GI and CI are the GPU instance's and the compute instance's ids (nvidia-smi's GI ID, CI ID).
	GI, CI int
	// Slices is the GPU instance's share of the GPU in slices, MemMiB its memory.
	Slices int
	MemMiB uint64
}

// Profile is the MIG device's profile name as nvidia-smi and Slurm write it: slices "g." memory
// in GB, rounded ("1g.10gb", "3g.40gb").
func (m MIGDevice) Profile() string {
	return fmt.Sprintf("%dg.%dgb", m.Slices, (m.MemMiB+512)/1024)
}

// Readable is the GPUs of gpus that are not lost.
func Readable(gpus []GPUInfo) []GPUInfo {
	var out []GPUInfo
	for _, g := range gpus {
		if g.Lost == "" {
			out = append(out, g)
		}
	}
	return out
}
