package ingest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/qm"
)

// slice is what the agent reads of one MIG device of GPU 0: its utilization (nil: none, as NVML
// gives none on an A100, nor on an H100 at the first reading or without GPM), the memory in use of
// its GPU instance (nil: not read) and whether the lease's process runs on it.
type slice struct {
	util  *float64
	mem   *uint64
	lease bool
}

// sliceIn is a slice of a given GPU instance: gi and ci, where gi is not 0, are its GPU and compute
// instance (else GPU instance k+1 for the k-th slice, compute instance 0); shared says its
// utilization is its GPU instance's (GPM's), as its other compute instances have it.
type sliceIn struct {
	slice
	gi, ci int
	shared bool
}

func u64(v uint64) *uint64 { return &v }

// reportMIG posts the node's report with GPU 0 in MIG mode, split into the given slices (the GPU
// itself has no utilization, as NVML gives none in MIG mode, and lists its slices' processes);
// the node's other GPUs are idle with no process.
func (e *labEnv) reportMIG(l *qm.Lease, slices ...slice) {
	e.t.Helper()
	in := make([]sliceIn, len(slices))
	for k, s := range slices {
		in[k] = sliceIn{slice: s}
	}
	e.reportMIGIn(l, in...)
}

// reportMIGIn is reportMIG with the slices' GPU and compute instances.
func (e *labEnv) reportMIGIn(l *qm.Lease, slices ...sliceIn) {
	e.t.Helper()
	e.seq++
	topo := &report.Topology{}
	var rgs []report.GPU
	for k := range 4 {
		topo.GPUs = append(topo.GPUs, report.TopologyGPU{Index: k, UUID: fmt.Sprintf("GPU-%s-%d", l.Node, k), NUMA: numa(0), CPUs: "0-15",
			NVLinks: []int{0, 0, 0, 0}, PCIe: []string{"NODE", "NODE", "NODE", "NODE"}})
		topo.GPUs[k].PCIe[k] = "X"
		g := report.GPU{Index: k, UUID: fmt.Sprintf("GPU-%s-%d", l.Node, k), Util: f(0), MemTotal: 40 * gib}
		if k == 0 {
			g.Util = nil
			for j, s := range slices {
				m := report.MIGDevice{UUID: fmt.Sprintf("MIG-%s-0-%d", l.Node, j), GI: j + 1, Profile: "1g.5gb", Util: s.util, MemUsed: s.mem, MemTotal: 5 * gib,
					InstanceUtil: s.shared}
				if s.gi != 0 {
					m.GI, m.CI = s.gi, s.ci
				}
				if s.mem != nil {
					g.MemUsed += *s.mem
				}
				if s.lease {
					p := report.Process{PID: uint32(100 + j), Job: fmt.Sprint(7000 + int(l.ID)), MemUsed: gib}
					m.Processes = []report.Process{p}
					g.Processes = append(g.Processes, p)
				}
				g.MIG = append(g.MIG, m)
			}
		}
		rgs = append(rgs, g)
	}
	r := report.Report{Version: report.Version, Node: l.Node, At: e.clock.Now(), Seq: e.seq, Interval: 60, TopologyHash: topo.Hash(), Topology: topo, GPUs: rgs}
	b, err := json.Marshal(r)
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+report.Path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+e.tokens[l.Node])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var why report.Error
		_ = json.NewDecoder(resp.Body).Decode(&why)
		e.t.Fatalf("report of %s: status %d: %s", l.Node, resp.StatusCode, why.Error)
	}
}

// A lease whose process runs on a MIG slice is judged by that slice: by its utilization where NVML
// gives one; where it gives none, the lease's process on it is work (its memory in use may stay
// put while it trains). The other slices of the GPU, busy or not, are not the lease's. Such a
// lease is never "without telemetry": the platform channel hears nothing of it.
func TestALeaseOnAMIGSliceIsJudgedByItsSlice(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name string
		// slices is the report at minute k: the lease's slice first, then another lease's.
		slices func(k int) []slice
		warned bool
	}{
		{"slice busy", func(int) []slice { return []slice{{f(60), u64(2 * gib), true}, {f(0), u64(gib), false}} }, false},
		{"slice idle, its neighbour busy", func(int) []slice { return []slice{{f(0), u64(2 * gib), true}, {f(90), u64(gib), false}} }, true},
		{"no utilization, memory moving", func(k int) []slice {
			return []slice{{nil, u64(2*gib + uint64(k%2)*512*mib), true}, {nil, u64(gib), false}}
		}, false},
		// The A100 and H100 give no utilization for a MIG device: a process of the lease on its
		// slice is work, whether its memory moves or not (training whose memory stays put).
		{"no utilization, memory still", func(int) []slice { return []slice{{nil, u64(2 * gib), true}, {nil, u64(gib), false}} }, false},
		{"no utilization, memory wobbling under 64 MiB", func(k int) []slice {
			return []slice{{nil, u64(2*gib + uint64(k%2)*20*mib), true}, {nil, u64(gib), false}}
		}, false},
		// Without a process of its own on any slice, the lease does nothing, whatever the
		// neighbours do.
		{"no utilization, no process of the lease, the neighbour's memory moving", func(k int) []slice {
			return []slice{{nil, u64(0), false}, {nil, u64(gib + uint64(k%2)*512*mib), false}}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, url string) {
				e := newLabEnv(t, url)
				l := e.start("nb", 1) // idle_timeout 10m
				for k := range 15 {
					e.reportMIG(l, tc.slices(k)...)
					e.tick()
					e.minute()
				}
				got := e.lease(l.ID)
				warned := got.State != qm.Active
				if warned != tc.warned {
					t.Errorf("after 15 minutes the lease is %s (%d idle warnings); want warned: %v", got.State, len(e.notes.Of(qm.NoticeIdleWarning, l.ID)), tc.warned)
				}
				if n := e.notes.Of(qm.NoticeTelemetryMissing, l.ID); len(n) != 0 {
					t.Errorf("a lease whose MIG slice is reported: %d notices of no GPU telemetry, want none", len(n))
				}
			})
		})
	}
}

// A lease's slice whose memory NVML could not read, and which gives no utilization, says nothing:
// the lease is not judged from it (it is never reclaimed for lack of data), and the platform
// channel is told once.
func TestAMIGSliceThatSaysNothingIsNotJudged(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newLabEnv(t, url)
		l := e.start("nb", 1)
		for range 30 {
			e.reportMIG(l, slice{nil, nil, true})
			e.tick()
			e.minute()
		}
		if got := e.lease(l.ID); got.State != qm.Active || len(e.notes.Of(qm.NoticeTelemetryMissing, l.ID)) != 1 {
			t.Errorf("a lease on a slice with neither utilization nor memory: %s, %d telemetry notices; want active, 1",
				got.State, len(e.notes.Of(qm.NoticeTelemetryMissing, l.ID)))
		}
	})
}

// What the agent reports of a MIG slice on a GPU with GPM (an H100 and later): no utilization at
// its first reading (nothing to compare with yet), then its GPU instance's activity since the
// reading before. A lease idle on such a slice is warned as a lease idle on a whole GPU is, its
// idle period counted from the first reading with an activity; one busy on it is not. On an A100
// (no GPM), or where GPM fails, the slice has no utilization and the lease's process holding it is
// work, as before: not warned, and the platform channel hears nothing of it, the slice's memory
// being read. A lease on one compute instance of a GPU instance shares the instance's activity with
// the other compute instances: their work keeps it from being warned.
func TestAnIdleMIGLeaseIsWarnedWhereTheAgentReadsItsActivity(t *testing.T) {
	gpm := func(first bool, v float64) *float64 {
		if first {
			return nil
		}
		return f(v)
	}
	for _, tc := range []struct {
		name   string
		slices func(k int) []sliceIn
		warned bool
	}{
		{"H100, slice idle", func(k int) []sliceIn {
			return []sliceIn{{slice: slice{gpm(k == 0, 0), u64(2 * gib), true}, shared: k > 0}, {slice: slice{gpm(k == 0, 80), u64(gib), false}, shared: k > 0}}
		}, true},
		{"H100, slice busy", func(k int) []sliceIn {
			return []sliceIn{{slice: slice{gpm(k == 0, 70), u64(2 * gib), true}, shared: k > 0}, {slice: slice{gpm(k == 0, 0), u64(gib), false}, shared: k > 0}}
		}, false},
		{"A100, no GPM", func(int) []sliceIn {
			return []sliceIn{{slice: slice{nil, u64(2 * gib), true}}, {slice: slice{nil, u64(gib), false}}}
		}, false},
		{"H100, idle compute instance of a GPU instance whose other compute instance is busy", func(k int) []sliceIn {
			return []sliceIn{{slice: slice{gpm(k == 0, 90), u64(2 * gib), true}, gi: 1, ci: 0, shared: k > 0},
				{slice: slice{gpm(k == 0, 90), u64(2 * gib), false}, gi: 1, ci: 1, shared: k > 0}}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachStore(t, func(t *testing.T, url string) {
				e := newLabEnv(t, url)
				l := e.start("nb", 1) // idle_timeout 10m
				for k := range 15 {
					e.reportMIGIn(l, tc.slices(k)...)
					e.tick()
					e.minute()
				}
				warned := len(e.notes.Of(qm.NoticeIdleWarning, l.ID)) > 0
				if warned != tc.warned {
					t.Errorf("after 15 minutes the lease is %s (%d idle warnings); want warned: %v", e.lease(l.ID).State, len(e.notes.Of(qm.NoticeIdleWarning, l.ID)), tc.warned)
				}
				if n := e.notes.Of(qm.NoticeTelemetryMissing, l.ID); len(n) != 0 {
					t.Errorf("a lease whose MIG slice is reported: %d notices to the platform channel, want none", len(n))
				}
			})
		})
	}
}
