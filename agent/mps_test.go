//go:build cgo

package agent_test

import (
	"context"
	"slices"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/report"
)

// A GPU shared through MPS (the device plugin's MPS sharing on Kubernetes, gres/mps on Slurm)
// runs its pods' work as clients of one MPS server: NVML lists the server as the GPU's compute
// process (in the MPS daemon's own pod) and the clients apart. A GPU that renders (OpenGL,
// Vulkan, EGL) lists its processes as graphics ones. Each is reported with its job or pod, once
// (a process with a compute and a graphics context is one process), so that the lease whose
// pods are the clients is seen working, not idle with no process on any GPU.
func TestMPSClientsAndGraphicsProcessesAreReportedWithTheirPods(t *testing.T) {
	a, f, _ := newFakeAgent(t, "dgxh100", "3 90; 5 60; * 0", agent.LabelsDCGM)
	shared := f.Server.Devices[3].(*server.Device)
	shared.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 4247, UsedGpuMemory: 30 << 20}}, gonvml.SUCCESS // nvidia-cuda-mps-server
	}
	shared.GetMPSComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 4244, UsedGpuMemory: 8 << 30}, {Pid: 4245, UsedGpuMemory: 4 << 30}}, gonvml.SUCCESS
	}
	render := f.Server.Devices[5].(*server.Device)
	render.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 4243, UsedGpuMemory: 2 << 30}}, gonvml.SUCCESS
	}
	render.GetGraphicsRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 4243, UsedGpuMemory: 2 << 30}, {Pid: 4242, UsedGpuMemory: 1 << 30}}, gonvml.SUCCESS
	}
	r, err := a.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	procs := func(i int) []report.Process {
		for _, g := range r.GPUs {
			if g.Index == i {
				return g.Processes
			}
		}
		t.Fatalf("GPU %d is not in the report", i)
		return nil
	}
	has := func(ps []report.Process, want report.Process) bool { return slices.Contains(ps, want) }
	mps := procs(3)
	for _, want := range []report.Process{
		{PID: 4247, MemUsed: 30 << 20, Pod: "9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a"},
		{PID: 4244, MemUsed: 8 << 30, Pod: "5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"},
		{PID: 4245, MemUsed: 4 << 30, Pod: "0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"},
	} {
		if !has(mps, want) {
			t.Errorf("GPU 3 (MPS) processes = %+v; want %+v among them", mps, want)
		}
	}
	if len(mps) != 3 {
		t.Errorf("GPU 3 (MPS) lists %d processes, want the server and its 2 clients: %+v", len(mps), mps)
	}
	gl := procs(5)
	if len(gl) != 2 || !has(gl, report.Process{PID: 4243, MemUsed: 2 << 30, Job: "77"}) || !has(gl, report.Process{PID: 4242, MemUsed: 1 << 30, Job: "123"}) {
		t.Errorf("GPU 5 (rendering) processes = %+v; want job 77's process once and job 123's", gl)
	}
	if ps := procs(0); len(ps) != 0 {
		t.Errorf("GPU 0 runs nothing, but lists %+v", ps)
	}
}
