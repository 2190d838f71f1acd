//go:build cgo

package nvml_test

import (
	"context"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
)

// A GPU whose processes NVML does not list (NOT_SUPPORTED) is one whose processes cannot be
// listed: it is left out of the sample, as a GPU whose list fails is, not reported as a GPU
// running no process, on which a lease's work would be nobody's. Its utilization alone cannot say
// whose work it does. Once NVML lists them, it is back.
func TestAGPUWhoseProcessesAreNotSupportedIsNotAGPUWithoutProcesses(t *testing.T) {
	ctx := context.Background()
	f, err := nvml.NewFake("dgxh100", "dgx-h-07", agent.StaticScript(mustScript(t, "* 60 pids=100")))
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	dev := f.Server.Devices[4].(*server.Device)
	procs := dev.GetComputeRunningProcessesFunc
	dev.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.ERROR_NOT_SUPPORTED }
	g, err := d.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range g {
		if x.Index == 4 {
			t.Errorf("GPU 4, whose processes NVML does not list, is in the sample as %+v", x)
		}
	}
	if len(g) != 7 {
		t.Errorf("%d GPUs sampled; want the 7 others", len(g))
	}
	dev.GetComputeRunningProcessesFunc = procs
	if g, err := d.Sample(ctx); err != nil || len(g) != 8 || len(g[4].Processes) != 1 {
		t.Errorf("once GPU 4 lists its processes: %d GPUs, %v; want all 8, GPU 4 with its process", len(g), err)
	}
}
