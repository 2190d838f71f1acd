//go:build cgo

package nvml_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
	"github.com/acme/quartermaster/internal/testkit"
)

// Phases of a driver reload (reload).
const (
	loaded int32 = iota
	unloaded
	reloaded
)

// reload plays the NVIDIA driver unloaded and loaded again under f, as phase says. Unloaded,
// every GPU call and Init answer DRIVER_NOT_LOADED. Loaded again, the handles read before answer
// UNINITIALIZED for good (the reload invalidated them), and the library counts and hands out the
// GPUs of next: after a new Init, only those read. It returns how often Init was called.
func reload(f, next *nvml.Fake, phase *atomic.Int32) *atomic.Int32 {
	var inits atomic.Int32
	f.Server.InitFunc = func() gonvml.Return {
		inits.Add(1)
		if phase.Load() == unloaded {
			return gonvml.ERROR_DRIVER_NOT_LOADED
		}
		return gonvml.SUCCESS
	}
	away := func() gonvml.Return {
		switch phase.Load() {
		case unloaded:
			return gonvml.ERROR_DRIVER_NOT_LOADED
		case reloaded:
			return gonvml.ERROR_UNINITIALIZED
		}
		return gonvml.SUCCESS
	}
	count, handle := f.Server.DeviceGetCountFunc, f.Server.DeviceGetHandleByIndexFunc
	f.Server.DeviceGetCountFunc = func() (int, gonvml.Return) {
		switch phase.Load() {
		case unloaded:
			return 0, gonvml.ERROR_DRIVER_NOT_LOADED
		case reloaded:
			return len(next.Server.Devices), gonvml.SUCCESS
		}
		return count()
	}
	f.Server.DeviceGetHandleByIndexFunc = func(i int) (gonvml.Device, gonvml.Return) {
		switch phase.Load() {
		case unloaded:
			return nil, gonvml.ERROR_DRIVER_NOT_LOADED
		case reloaded:
			return next.Server.DeviceGetHandleByIndex(i)
		}
		return handle(i)
	}
	for _, x := range f.Server.Devices {
		dev := x.(*server.Device)
		u, p, numa := dev.GetUtilizationRatesFunc, dev.GetComputeRunningProcessesFunc, dev.GetNumaNodeIdFunc
		dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) {
			if r := away(); r != gonvml.SUCCESS {
				return gonvml.Utilization{}, r
			}
			return u()
		}
		dev.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
			if r := away(); r != gonvml.SUCCESS {
				return nil, r
			}
			return p()
		}
		dev.GetNumaNodeIdFunc = func() (int, gonvml.Return) {
			if r := away(); r != gonvml.SUCCESS {
				return 0, r
			}
			return numa()
		}
	}
	return &inits
}

// A driver unloaded and loaded again while the agent runs (a driver update without a reboot, a
// GPU operator restarting its driver pod) may leave the agent's NVML handles invalid: NVML then
// answers UNINITIALIZED for good to them. The agent shuts NVML down and initialises it again,
// with a backoff while the driver is still away (not at every reading), saying once that it
// does, and once it is back reads the GPUs afresh, whether the same (the same UUIDs) or fewer:
// readings and the topology resume without a restart.
func TestADriverReloadedUnderTheAgentIsInitialisedAgain(t *testing.T) {
	for _, after := range []int{8, 6} {
		ctx := context.Background()
		script := agent.StaticScript(mustScript(t, "2 60 pids=5150; * 0"))
		f, err := nvml.NewFake("dgxa100", "rk-07", script)
		if err != nil {
			t.Fatal(err)
		}
		next, err := nvml.NewFake("dgxa100", "rk-07", script)
		if err != nil {
			t.Fatal(err)
		}
		next.Server.Devices = next.Server.Devices[:after]
		var logs testkit.SyncBuffer
		d, err := nvml.OpenFake(f, slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		now := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
		d.Now = func() time.Time { return now }
		if g, err := d.Sample(ctx); err != nil || len(g) != 8 {
			t.Fatalf("before the reload: %d GPUs, %v", len(g), err)
		}
		var phase atomic.Int32
		inits := reload(f, next, &phase)
		phase.Store(unloaded)
		const readings = 20
		for range readings {
			now = now.Add(30 * time.Second)
			if _, err := d.Sample(ctx); err == nil || !strings.Contains(err.Error(), "not loaded") {
				t.Fatalf("a reading with the driver unloaded: %v", err)
			}
		}
		if n := inits.Load(); n == 0 || n >= readings {
			t.Errorf("%d GPUs after: NVML initialised %d times over %d readings with the driver away; want some, with a backoff", after, n, readings)
		}
		if n := strings.Count(logs.String(), "level=WARN") + strings.Count(logs.String(), "level=ERROR"); n > 1 {
			t.Errorf("%d GPUs after: %d warnings while the driver is away; want one at most:\n%s", after, n, logs.String())
		}
		phase.Store(reloaded)
		var g []reading
		for range 10 { // the backoff's longest wait is well within this
			now = now.Add(30 * time.Second)
			got, err := d.Sample(ctx)
			if err == nil {
				g = make([]reading, len(got))
				for i := range got {
					g[i] = reading{got[i].UUID, got[i].Util}
				}
				break
			}
		}
		if len(g) != after {
			t.Fatalf("%d GPUs after: once the driver is back the readings are of %d GPUs, want %d:\n%s", after, len(g), after, logs.String())
		}
		for i, x := range g {
			want := next.Server.Devices[i].(*server.Device).UUID
			if x.uuid != want {
				t.Errorf("%d GPUs after: GPU %d reads as %s, want %s", after, i, x.uuid, want)
			}
		}
		if g[2].util == nil || *g[2].util != 60 {
			t.Errorf("%d GPUs after: GPU 2's utilization once the driver is back: %v", after, g[2].util)
		}
		if n := len(d.GPUs()); n != after {
			t.Errorf("%d GPUs after: the agent lists %d GPUs", after, n)
		}
		if topo, err := d.Topology(ctx); err != nil || len(topo.GPUs) != after || topo.GPUs[0].NUMA == nil {
			t.Errorf("%d GPUs after: the topology once the driver is back: %d GPUs, %v", after, len(topo.GPUs), err)
		}
		if !strings.Contains(logs.String(), "initialised again and the GPUs read afresh") {
			t.Errorf("%d GPUs after: the log does not say NVML was initialised again:\n%s", after, logs.String())
		}
	}
}

type reading struct {
	uuid string
	util *float64
}
