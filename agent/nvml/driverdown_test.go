//go:build cgo

package nvml_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
	"github.com/acme/quartermaster/internal/testkit"
)

// driverDown makes every GPU of f answer ret to what a sample and a topology read ask while down
// is set, as NVML does while the driver is unloaded for an upgrade (or its kernel module and
// library differ).
func driverDown(f *nvml.Fake, down *atomic.Bool, ret gonvml.Return) {
	for _, x := range f.Server.Devices {
		dev := x.(*server.Device)
		u, p, m, m2 := dev.GetUtilizationRatesFunc, dev.GetComputeRunningProcessesFunc, dev.GetMemoryInfoFunc, dev.GetMemoryInfo_v2Func
		numa, cpus, link, anc := dev.GetNumaNodeIdFunc, dev.GetCpuAffinityFunc, dev.GetNvLinkStateFunc, dev.GetTopologyCommonAncestorFunc
		dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) {
			if down.Load() {
				return gonvml.Utilization{}, ret
			}
			return u()
		}
		dev.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
			if down.Load() {
				return nil, ret
			}
			return p()
		}
		dev.GetMemoryInfoFunc = func() (gonvml.Memory, gonvml.Return) {
			if down.Load() {
				return gonvml.Memory{}, ret
			}
			return m()
		}
		dev.GetMemoryInfo_v2Func = func() (gonvml.Memory_v2, gonvml.Return) {
			if down.Load() {
				return gonvml.Memory_v2{}, ret
			}
			return m2()
		}
		dev.GetNumaNodeIdFunc = func() (int, gonvml.Return) {
			if down.Load() {
				return 0, ret
			}
			return numa()
		}
		dev.GetCpuAffinityFunc = func(n int) ([]uint, gonvml.Return) {
			if down.Load() {
				return nil, ret
			}
			return cpus(n)
		}
		dev.GetNvLinkStateFunc = func(l int) (gonvml.EnableState, gonvml.Return) {
			if down.Load() {
				return 0, ret
			}
			return link(l)
		}
		dev.GetTopologyCommonAncestorFunc = func(o gonvml.Device) (gonvml.GpuTopologyLevel, gonvml.Return) {
			if down.Load() {
				return 0, ret
			}
			return anc(o)
		}
	}
}

// While the driver is unloaded for an upgrade (NVML answers DRIVER_NOT_LOADED for every GPU),
// the agent says so in one sentence naming the driver, not NVML's code and not once per GPU; it
// does not take the GPUs' unanswered calls for a topology without NVLinks or NUMA nodes (which the
// service would place multi-GPU leases by); and once the driver is back, every GPU reads again.
func TestADriverUnloadedWhileRunningIsSaidOnceAndKeepsTheTopology(t *testing.T) {
	for _, c := range []struct {
		ret  gonvml.Return
		want string
	}{
		{gonvml.ERROR_DRIVER_NOT_LOADED, "not loaded"},
		{gonvml.ERROR_LIB_RM_VERSION_MISMATCH, "starts it again"},
	} {
		ctx := context.Background()
		f, err := nvml.NewFake("dgxh100", "hx-31", agent.StaticScript(mustScript(t, "0-3 75 pids=311; * 0")))
		if err != nil {
			t.Fatal(err)
		}
		var logs testkit.SyncBuffer
		d, err := nvml.OpenFake(f, slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		before, err := d.Topology(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var down atomic.Bool
		driverDown(f, &down, c.ret)
		down.Store(true)
		for range 3 {
			_, err = d.Sample(ctx)
		}
		if err == nil || !strings.Contains(err.Error(), "driver") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "ERROR_") {
			t.Errorf("%s: sample error %v; want one sentence saying the driver is %s, without NVML's code", c.ret, err, c.want)
		}
		if n := strings.Count(logs.String(), "level=ERROR"); n > 1 {
			t.Errorf("%s: %d ERROR lines while the driver is down; want one at most:\n%s", c.ret, n, logs.String())
		}
		if topo, err := d.Topology(ctx); err == nil && topo.Hash() != before.Hash() {
			t.Errorf("%s: while the driver is down the topology reads %+v, another than before, with no error", c.ret, topo.GPUs[0])
		}
		down.Store(false)
		if g, err := d.Sample(ctx); err != nil || len(g) != 8 || *g[2].Util != 75 || len(g[2].Processes) != 1 {
			t.Errorf("%s: once the driver is back: %d GPUs, %v", c.ret, len(g), err)
		}
		if topo, err := d.Topology(ctx); err != nil || topo.Hash() != before.Hash() {
			t.Errorf("%s: once the driver is back the topology is %v, %v", c.ret, topo.Hash() == before.Hash(), err)
		}
	}
}
