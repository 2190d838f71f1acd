//go:build cgo

package agent_test

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
)

// While the driver is unloaded for an upgrade, the topology cannot be read either: the agent keeps
// the one it read, says so once rather than at every reading, and sends no topology of GPUs
// without NVLinks or NUMA nodes; once the driver is back, its reports go on with the topology the
// service has.
func TestATopologyUnreadWhileTheDriverIsAwayIsSaidOnce(t *testing.T) {
	s, err := agent.ParseScript("0-1 65 pids=4242; * 0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := nvml.NewFake("dgxa100", "hx-31", agent.StaticScript(s))
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	var log lockedBuffer
	now := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	a, err := agent.New(agent.Config{Node: "hx-31", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"}, TopologyEvery: time.Minute,
		Now: func() time.Time { return now }, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := a.Collect(ctx)
	if err != nil || first.Topology == nil {
		t.Fatalf("first report: topology %v, %v", first.Topology != nil, err)
	}
	var down atomic.Bool
	for _, x := range f.Server.Devices {
		dev := x.(*server.Device)
		util, numa := dev.GetUtilizationRatesFunc, dev.GetNumaNodeIdFunc
		dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) {
			if down.Load() {
				return gonvml.Utilization{}, gonvml.ERROR_DRIVER_NOT_LOADED
			}
			return util()
		}
		dev.GetNumaNodeIdFunc = func() (int, gonvml.Return) {
			if down.Load() {
				return 0, gonvml.ERROR_DRIVER_NOT_LOADED
			}
			return numa()
		}
	}
	down.Store(true)
	for range 12 {
		now = now.Add(30 * time.Second)
		if _, err := a.Collect(ctx); err == nil || !strings.Contains(err.Error(), "not loaded") {
			t.Fatalf("a reading with the driver away: %v", err)
		}
	}
	if n := strings.Count(log.String(), "level=WARN"); n > 1 {
		t.Errorf("six minutes with the driver away logged %d warnings; want one at most:\n%s", n, log.String())
	}
	down.Store(false)
	now = now.Add(30 * time.Second)
	r, err := a.Collect(ctx)
	if err != nil || len(r.GPUs) != 8 {
		t.Fatalf("once the driver is back: %d GPUs, %v", len(r.GPUs), err)
	}
	if r.TopologyHash != first.TopologyHash || (r.Topology != nil && r.Topology.Hash() != first.TopologyHash) {
		t.Errorf("once the driver is back the report's topology is %q, not the node's %q", r.TopologyHash, first.TopologyHash)
	}
}
