//go:build cgo

package agent_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
	"github.com/acme/quartermaster/agent/report"
)

type agentReport struct {
	gpus int
	topo *report.Topology
	hash string
}

// A driver unloaded and loaded again while the agent runs, after which the library hands out other
// handles and counts fewer GPUs (one taken off the node meanwhile), with the old handles refused
// for good: the agent's reports resume without a restart, of the GPUs there are now, and the
// first one carries their topology, not the one read before with a GPU that is gone, even when
// the outage was shorter than the topology's interval.
func TestReportsResumeAfterADriverReloadWithTheGPUsThereAreNow(t *testing.T) {
	s, err := agent.ParseScript("1 35 pids=4242; * 0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := nvml.NewFake("dgxh100", "vy-12", agent.StaticScript(s))
	if err != nil {
		t.Fatal(err)
	}
	next, err := nvml.NewFake("dgxh100", "vy-12", agent.StaticScript(s))
	if err != nil {
		t.Fatal(err)
	}
	next.Server.Devices = next.Server.Devices[:7]
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	now := time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	d.Now = clock
	var log lockedBuffer
	a, err := agent.New(agent.Config{Node: "vy-12", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"}, TopologyEvery: time.Hour,
		Now: clock, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := a.Collect(ctx)
	if err != nil || len(first.GPUs) != 8 || first.Topology == nil {
		t.Fatalf("first report: %d GPUs, topology %v, %v", len(first.GPUs), first.Topology != nil, err)
	}
	var phase atomic.Int32 // 0 loaded, 1 unloaded, 2 loaded again
	f.Server.InitFunc = func() gonvml.Return {
		if phase.Load() == 1 {
			return gonvml.ERROR_DRIVER_NOT_LOADED
		}
		return gonvml.SUCCESS
	}
	f.Server.DeviceGetCountFunc = func() (int, gonvml.Return) { return len(next.Server.Devices), gonvml.SUCCESS }
	f.Server.DeviceGetHandleByIndexFunc = next.Server.DeviceGetHandleByIndex
	for _, x := range f.Server.Devices {
		dev := x.(*server.Device)
		dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) {
			if phase.Load() == 1 {
				return gonvml.Utilization{}, gonvml.ERROR_DRIVER_NOT_LOADED
			}
			return gonvml.Utilization{}, gonvml.ERROR_UNINITIALIZED
		}
		dev.GetNumaNodeIdFunc = func() (int, gonvml.Return) {
			if phase.Load() == 1 {
				return 0, gonvml.ERROR_DRIVER_NOT_LOADED
			}
			return 0, gonvml.ERROR_UNINITIALIZED
		}
	}
	phase.Store(1)
	for range 6 {
		now = now.Add(10 * time.Second)
		if _, err := a.Collect(ctx); err == nil {
			t.Fatal("a reading with the driver unloaded worked")
		}
	}
	phase.Store(2)
	var r *agentReport
	for range 30 { // the backoff's longest wait is well within this
		now = now.Add(10 * time.Second)
		if got, err := a.Collect(ctx); err == nil {
			r = &agentReport{gpus: len(got.GPUs), topo: got.Topology, hash: got.TopologyHash}
			break
		}
	}
	if r == nil {
		t.Fatalf("no report once the driver is back:\n%s", log.String())
	}
	if r.gpus != 7 {
		t.Errorf("the first report once the driver is back has %d GPUs, want the 7 there are now", r.gpus)
	}
	if r.topo == nil || len(r.topo.GPUs) != 7 || r.hash == first.TopologyHash {
		n := 0
		if r.topo != nil {
			n = len(r.topo.GPUs)
		}
		t.Errorf("the first report once the driver is back carries a topology of %d GPUs (hash changed: %v), want the 7 there are now", n, r.hash != first.TopologyHash)
	}
}
