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

// A driver upgraded while the agent runs, its new kernel module loaded under the old library the
// agent holds, answers LIB_RM_VERSION_MISMATCH for good: no reading will work again in this
// process. The agent ends with that said in one sentence (exit 1), so that its service manager
// (systemd's Restart=on-failure, the DaemonSet) starts it again with the new library, instead of
// trying at every interval for ever with no report sent.
func TestADriverUpgradedUnderTheAgentEndsItToBeStartedAgain(t *testing.T) {
	s, err := agent.ParseScript("* 20 pids=4242")
	if err != nil {
		t.Fatal(err)
	}
	f, err := nvml.NewFake("dgxh100", "hx-32", agent.StaticScript(s))
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	var upgraded atomic.Bool
	for _, x := range f.Server.Devices {
		dev := x.(*server.Device)
		util := dev.GetUtilizationRatesFunc
		dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) {
			if upgraded.Load() {
				return gonvml.Utilization{}, gonvml.ERROR_LIB_RM_VERSION_MISMATCH
			}
			return util()
		}
	}
	var log lockedBuffer
	a, err := agent.New(agent.Config{Node: "hx-32", Devices: d, Cgroups: agent.Cgroups{ProcRoot: "testdata/proc"}, Interval: time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
	upgraded.Store(true)
	// The deadline only keeps a broken agent from hanging the test.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = a.Run(ctx)
	if ctx.Err() != nil || err == nil || !strings.Contains(err.Error(), "starts it again") || strings.Contains(err.Error(), "ERROR_") {
		t.Errorf("a driver upgraded under the running agent: Run returned %v (context: %v); want it to end saying it is to be started again", err, ctx.Err())
	}
}
