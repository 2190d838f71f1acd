//go:build cgo

package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
)

// h200 is one H200 as the probe of a real one (driver 580) read it, idle: NVML's first memory
// call counts the memory the driver reserves as used (615 MiB with no process), its version 2
// gives it apart.
// v2 nil is a driver without that version (before R510), whose library lacks the symbol.
func h200(t *testing.T, v2 func() (gonvml.Memory_v2, gonvml.Return)) *agent.Agent {
	t.Helper()
	srv := server.NewServerWithGPUs("580.159.04", "13.580.159.04", 13000, gpus.Multiple(1, gpus.H200_SXM5_141GB)...)
	if v2 == nil {
		// Calling a symbol the library lacks would crash the agent; the mock would panic.
		srv.LookupSymbolFunc = func(symbol string) error {
			if symbol == "nvmlDeviceGetMemoryInfo_v2" {
				return errors.New("undefined symbol: " + symbol)
			}
			return nil
		}
	}
	srv.EventSetCreateFunc = func() (gonvml.EventSet, gonvml.Return) { return nil, gonvml.ERROR_NOT_SUPPORTED }
	dev := srv.Devices[0].(*server.Device)
	dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, gonvml.SUCCESS }
	dev.GetMemoryInfoFunc = func() (gonvml.Memory, gonvml.Return) {
		return gonvml.Memory{Total: 150754820096, Free: 150109880320, Used: 644939776}, gonvml.SUCCESS
	}
	dev.GetMemoryInfo_v2Func = v2
	dev.GetPowerUsageFunc = func() (uint32, gonvml.Return) { return 80757, gonvml.SUCCESS }
	dev.GetTemperatureFunc = func(gonvml.TemperatureSensors) (uint32, gonvml.Return) { return 38, gonvml.SUCCESS }
	dev.GetTotalEccErrorsFunc = func(gonvml.MemoryErrorType, gonvml.EccCounterType) (uint64, gonvml.Return) { return 0, gonvml.SUCCESS }
	none := func() ([]gonvml.ProcessInfo, gonvml.Return) { return nil, gonvml.SUCCESS }
	dev.GetComputeRunningProcessesFunc, dev.GetMPSComputeRunningProcessesFunc, dev.GetGraphicsRunningProcessesFunc = none, none, none
	dev.GetCpuAffinityFunc = func(int) ([]uint, gonvml.Return) { return []uint{65535}, gonvml.SUCCESS }
	dev.GetNumaNodeIdFunc = func() (int, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED }
	dev.GetNvLinkStateFunc = func(int) (gonvml.EnableState, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED }
	d, err := nvml.Open(srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	a, err := agent.New(agent.Config{Node: "h200-01", Devices: d})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The memory in use is what nvidia-smi and dcgm-exporter show: without the memory the driver
// reserves for itself, which NVML's first memory call counts as used. An idle H200 then shows
// 0 MiB used, not 615 MiB that no process holds, and its free memory is what a job can take.
// A driver without the newer call (before R510) is read as before.
func TestMemoryInUseLeavesOutWhatTheDriverReserves(t *testing.T) {
	a := h200(t, func() (gonvml.Memory_v2, gonvml.Return) {
		return gonvml.Memory_v2{Version: 33554472, Total: 150754820096, Reserved: 644939776, Free: 150109880320, Used: 0}, gonvml.SUCCESS
	})
	r, err := a.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g := r.GPUs[0]; g.MemUsed != 0 || g.MemTotal != 150754820096 || g.MemUnread {
		t.Errorf("idle H200: memory used %d of %d; want 0 of 150754820096", g.MemUsed, g.MemTotal)
	}
	m := scrape(t, a)
	if used := grep(m, "DCGM_FI_DEV_FB_USED{"); !strings.HasSuffix(strings.TrimSpace(used), "} 0") {
		t.Errorf("idle H200: want 0 MiB used, as nvidia-smi shows:\n%s", used)
	}
	if free := grep(m, "DCGM_FI_DEV_FB_FREE{"); !strings.HasSuffix(strings.TrimSpace(free), "} 143155") {
		t.Errorf("idle H200: want 143155 MiB free (its memory less what the driver reserves):\n%s", free)
	}

	for name, v2 := range map[string]func() (gonvml.Memory_v2, gonvml.Return){
		"a driver without the newer call": nil,
		"a GPU that does not support it":  func() (gonvml.Memory_v2, gonvml.Return) { return gonvml.Memory_v2{}, gonvml.ERROR_NOT_SUPPORTED },
	} {
		r, err := h200(t, v2).Collect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if g := r.GPUs[0]; g.MemUsed != 644939776 || g.MemUnread {
			t.Errorf("%s: memory used %d, unread %v; want NVML's first call's 644939776", name, g.MemUsed, g.MemUnread)
		}
	}
}
