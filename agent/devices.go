package agent

import (
	"context"

	"github.com/acme/quartermaster/agent/report"
)

// Devices reads a node's GPUs. agent/nvml implements it over NVML: the machine's driver, or one of
// go-nvml's mock DGX servers completed by its fake.
type Devices interface {
	// Driver is the driver version.
	Driver() string
	// GPUs lists the GPUs by index, with what does not change while the agent runs.
	GPUs() []GPUInfo
	// Sample reads every GPU now. Processes carry their PIDs; the agent finds their jobs.
	Sample(ctx context.Context) ([]report.GPU, error)
	// Topology reads how the GPUs are connected.
	Topology(ctx context.Context) (report.Topology, error)
	Close() error
}

// GPUInfo is what does not change about a GPU.
type GPUInfo struct {
	Index    int
	UUID     string
	Name     string
	BusID    string
	Minor    int // /dev/nvidiaN
	MemTotal uint64
}
