//go:build cgo

package agent_test

import (
	"context"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
)

// A GPU in MIG mode whose processes can be listed neither whole (NVML does not give the whole
// GPU's list: NOT_SUPPORTED, NO_PERMISSION or another refusal) nor through every MIG device (one
// of them does not list its own) is left out of the reading, as a GPU whose processes cannot be
// listed is: reported with the slices that did list theirs, the job on the other slice would be
// nowhere, and its lease would look as if it ran no process at all. Where every MIG device lists
// its processes, they are the GPU's, whatever NVML said of the whole GPU's list.
func TestAMIGGPUWhoseProcessesCannotAllBeListedIsLeftOut(t *testing.T) {
	for _, refused := range []gonvml.Return{gonvml.ERROR_NOT_SUPPORTED, gonvml.ERROR_NO_PERMISSION, gonvml.ERROR_UNKNOWN} {
		t.Run(gonvml.ErrorString(refused), func(t *testing.T) {
			s, err := agent.ParseScript("* 30")
			if err != nil {
				t.Fatal(err)
			}
			f, err := nvml.NewFake("dgxa100", "dgx-01", agent.StaticScript(s))
			if err != nil {
				t.Fatal(err)
			}
			migs := migGPU(f, 1, [][3]int{{3, 19968, 1}, {2, 9856, 5}})
			parent := f.Server.Devices[1].(*server.Device)
			parent.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, gonvml.ERROR_NOT_SUPPORTED }
			parent.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, refused }
			migs[0].GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
				return []gonvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 8 << 30, GpuInstanceId: 1}}, gonvml.SUCCESS
			}
			unlisted := func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.ERROR_UNKNOWN }
			migs[1].GetComputeRunningProcessesFunc = unlisted
			d, err := nvml.OpenFake(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			a, err := agent.New(agent.Config{Node: "dgx-01", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := a.Collect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range r.GPUs {
				if g.Index == 1 {
					t.Fatalf("GPU 1, whose second MIG device's processes could not be listed nor the whole GPU's, is in the report: %+v", g)
				}
			}
			if len(r.GPUs) != 7 {
				t.Errorf("the report lists %d GPUs; want the 7 others", len(r.GPUs))
			}

			// Every MIG device lists its processes again: they are the GPU's.
			migs[1].GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
				return []gonvml.ProcessInfo{{Pid: 4243, UsedGpuMemory: 1 << 30, GpuInstanceId: 5}}, gonvml.SUCCESS
			}
			if r, err = a.Collect(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(r.GPUs) != 8 || r.GPUs[1].Index != 1 || len(r.GPUs[1].Processes) != 2 || r.GPUs[1].Processes[0].Job != "123" || r.GPUs[1].Processes[1].Job != "77" {
				t.Errorf("with every MIG device read, the report's GPUs = %+v; want all 8, GPU 1 with jobs 123 and 77", r.GPUs)
			}
		})
	}
}
