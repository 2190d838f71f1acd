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
// gives none on an A100 or H100), the memory in use of its GPU instance (nil: not read) and
// whether the lease's process runs on it.
type slice struct {
	util  *float64
	mem   *uint64
	lease bool
}

func u64(v uint64) *uint64 { return &v }

// reportMIG posts the node's report with GPU 0 in MIG mode, split into the given slices (the GPU
// itself has no utilization, as NVML gives none in MIG mode, and lists its slices' processes);
// the node's other GPUs are idle with no process.
func (e *labEnv) reportMIG(l *qm.Lease, slices ...slice) {
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
				m := report.MIGDevice{UUID: fmt.Sprintf("MIG-%s-0-%d", l.Node, j), GI: j + 1, Profile: "1g.5gb", Util: s.util, MemUsed: s.mem, MemTotal: 5 * gib}
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
