package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/acme/quartermaster/agent/report"
)

// ErrRestart matches (errors.Is) a reading's error after which no reading can work again in this
// process: a driver upgraded under the running agent (its new kernel module loaded beneath the
// library the agent holds). Run ends with it, for the service manager to start the agent again.
var ErrRestart = errors.New("the agent must be started again")

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
	// Name is the profile's name as the driver gives it ("3g.40gb", "1g.10gb+me"); empty where
	// it gives none (drivers older than R470, or a profile NVML does not list).
	Name string
	// GPUMemTotal is the whole GPU's memory in bytes (0: unknown), from which Profile works out
	// the profile's name where the driver gives none.
	GPUMemTotal uint64
}

// Profile is the MIG device's profile name as nvidia-smi and dcgm-exporter write it ("1g.10gb",
// "3g.40gb", "1g.10gb+me"): the driver's name, else worked out by MIGProfileName.
func (m MIGDevice) Profile() string {
	if m.Name != "" {
		return m.Name
	}
	return MIGProfileName(m.Slices, m.MemMiB, m.GPUMemTotal)
}

// MIGProfileName names a GPU instance profile as NVIDIA does: slices "g." memory in GB, where the
// memory is the instance's share of the GPU's memory rounded up to eighths (MIG splits the memory
// in 8), times the GPU's memory in GB rounded up. Rounding the instance's own memory would not give
// NVIDIA's names: 40192 MiB is the 3g.40gb of an A100-80GB and the 7g.40gb of an A100-40GB, not
// 39gb, and the H200's 1g.18gb has 16384 MiB. Without the GPU's memory (gpuMemTotal 0) the
// instance's memory is rounded to GB.
func MIGProfileName(slices int, memMiB, gpuMemTotal uint64) string {
	const gib = 1 << 30
	if gpuMemTotal == 0 || memMiB<<20 > gpuMemTotal {
		return fmt.Sprintf("%dg.%dgb", slices, (memMiB+512)/1024)
	}
	eighths := (memMiB<<20*8 + gpuMemTotal - 1) / gpuMemTotal // rounded up
	gpuGB := (gpuMemTotal + gib - 1) / gib                    // rounded up
	gb := (eighths*gpuGB*2 + 8) / 16                          // eighths/8 of gpuGB, rounded half up
	return fmt.Sprintf("%dg.%dgb", slices, gb)
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
