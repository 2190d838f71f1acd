package ingest_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
)

// quadTopology is a node of four GPUs, all NVLinked, whose UUIDs are GPU-0 … GPU-3.
func quadTopology() *report.Topology {
	t := &report.Topology{}
	for i := range 4 {
		g := report.TopologyGPU{Index: i, UUID: fmt.Sprintf("GPU-%d", i), NUMA: numa(0), CPUs: "0-31", NVLinks: make([]int, 4), PCIe: make([]string, 4)}
		for j := range 4 {
			g.PCIe[j] = "NODE"
			if j != i {
				g.NVLinks[j] = 6
			}
		}
		g.PCIe[i] = "X"
		t.GPUs = append(t.GPUs, g)
	}
	return t
}

// A job that uses only some of its lease's GPUs keeps the lease from being reclaimed (a lease is
// idle when none of its GPUs shows activity), but the showback counts the GPUs it leaves unused
// as idle: the idle GPU-hours are the GPU-seconds telemetry saw idle, GPU by GPU. A GPU it runs a
// process on at a utilization under the threshold is idle too; one whose utilization could not be
// read is not counted idle, nor one busy with a process of no known job, which may be the lease's.
func TestTheUnusedGPUsOfALeaseCountIdle(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{
			{ID: 7, State: qm.Active, GPUs: 4, Ref: "88021", Node: "n1"},
		}
		e := newEnv(t, url, leases...)
		topo := quadTopology()
		post := func(gpus ...report.GPU) {
			t.Helper()
			r := report.Report{Version: report.Version, Node: "n1", At: e.clock.Now(), Run: "r1", Seq: uint64(e.clock.Now().Sub(t0)/(30*time.Second)) + 1,
				Interval: 30, GPUs: gpus, Topology: topo, TopologyHash: topo.Hash()}
			e.accept(e.tokens["n1"], r)
			e.clock.Advance(30 * time.Second)
		}
		job := func(pid uint32) []report.Process {
			return []report.Process{{PID: pid, Job: "88021", MemUsed: 20 << 30}}
		}
		// Two GPUs busy, two with no process at all.
		post(report.GPU{Index: 0, UUID: "GPU-0", Util: f(91), Processes: job(100)},
			report.GPU{Index: 1, UUID: "GPU-1", Util: f(88), Processes: job(101)},
			report.GPU{Index: 2, UUID: "GPU-2", Util: f(0)},
			report.GPU{Index: 3, UUID: "GPU-3", Util: f(0)})
		// One busy, one with a process of the job at 1 %, two with none.
		post(report.GPU{Index: 0, UUID: "GPU-0", Util: f(97), Processes: job(100)},
			report.GPU{Index: 1, UUID: "GPU-1", Util: f(1), Processes: job(101)},
			report.GPU{Index: 2, UUID: "GPU-2", Util: f(0)},
			report.GPU{Index: 3, UUID: "GPU-3", Util: f(0)})
		// One busy, one of the job's whose utilization NVML did not give, two with none.
		post(report.GPU{Index: 0, UUID: "GPU-0", Util: f(97), Processes: job(100)},
			report.GPU{Index: 1, UUID: "GPU-1", Processes: job(101)},
			report.GPU{Index: 2, UUID: "GPU-2", Util: f(0)},
			report.GPU{Index: 3, UUID: "GPU-3", Util: f(0)})
		// One busy, one busy with a process the agent could not map to a job (it may be the
		// lease's), two with none.
		post(report.GPU{Index: 0, UUID: "GPU-0", Util: f(97), Processes: job(100)},
			report.GPU{Index: 1, UUID: "GPU-1", Util: f(99), Processes: []report.Process{{PID: 555}}},
			report.GPU{Index: 2, UUID: "GPU-2", Util: f(0)},
			report.GPU{Index: 3, UUID: "GPU-3", Util: f(0)})
		a, ok := (ingest.Telemetry{Store: e.db}).Activity(t.Context(), leases[0])
		if !ok || a.LastActive.IsZero() {
			t.Errorf("a lease with two of its four GPUs busy: activity %+v, %v; want it active, not to be reclaimed", a, ok)
		}
		gpuSecs, idle := e.usage()
		if gpuSecs[7] != 4*4*30 || idle[7] != 30*(2+3+2+2) {
			t.Errorf("L-7: %v GPU-seconds, %v idle; want %d GPU-seconds, %d idle (the GPUs it left unused)", gpuSecs[7], idle[7], 4*4*30, 30*(2+3+2+2))
		}
	})
}

// The showback's mean utilization weighs each GPU alike, as the simulated cluster's does, and a
// lease's GPUs left unused count at 0 %: a 1-GPU lease at 100 % for a minute beside a 4-GPU lease
// whose job runs on two of its GPUs at 2 % for that minute is 20.8 % over the five GPUs, not the
// mean of the reports' means, however long each agent's interval.
func TestMeanUtilizationWeighsEachGPUAlike(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{
			{ID: 3, State: qm.Active, GPUs: 1, Ref: "5120", Node: "n1"},
			{ID: 4, State: qm.Active, GPUs: 4, Ref: "5121", Node: "n2"},
		}
		e := newEnv(t, url, leases...)
		topo1 := topology()
		e.accept(e.tokens["n1"], report.Report{Version: report.Version, Node: "n1", At: e.clock.Now(), Run: "a", Seq: 1, Interval: 60,
			Topology: topo1, TopologyHash: topo1.Hash(),
			GPUs: []report.GPU{{Index: 0, UUID: "GPU-0", Util: f(100), Processes: []report.Process{{PID: 9, Job: "5120"}}}, {Index: 1, UUID: "GPU-1", Util: f(0)}}})
		proc := func(pid uint32) []report.Process { return []report.Process{{PID: pid, Job: "5121"}} }
		for k := range 6 {
			r := report.Report{Version: report.Version, At: e.clock.Now(), Run: "b", Seq: uint64(k + 1), Interval: 10, Topology: quadTopology(),
				GPUs: []report.GPU{{Index: 0, UUID: "GPU-0", Util: f(2), Processes: proc(20)}, {Index: 1, UUID: "GPU-1", Util: f(2), Processes: proc(21)},
					{Index: 2, UUID: "GPU-2", Util: f(0)}, {Index: 3, UUID: "GPU-3", Util: f(0)}}}
			ownGPUs(&r, "n2")
			e.accept(e.tokens["n2"], r)
			e.clock.Advance(10 * time.Second)
		}
		if err := e.ing.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		use, err := e.db.Usage(t.Context(), t0.Add(-time.Hour), t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var sum qm.UsageRollup
		for _, u := range use {
			sum.UtilSum += u.UtilSum
			sum.Samples += u.Samples
		}
		want := (100*60*1 + 1*60*4) / float64(60*5)
		if got := sum.MeanUtilization(); math.Abs(got-want) > 0.01 {
			t.Errorf("mean utilization over the two leases: %.2f %%; want %.2f %%, each GPU weighed alike (rollups %+v)", got, want, use)
		}
	})
}

// A lease whose GPU fell off the bus (the node's reports lack it) cannot be judged: it is never
// reclaimed, and the showback does not count its time as observed either, neither idle nor busy:
// its idle GPU-hours are not known rather than 0 for as long as the GPU stays lost. Once the GPU
// reads again, its time is observed as before.
func TestALeaseOnALostGPUIsNotObservedBusy(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{{ID: 11, State: qm.Active, GPUs: 1, GPUIndex: []int{3}, Ref: "70311", Node: "n1"}}
		e := newEnv(t, url, leases...)
		topo := quadTopology()
		seq := uint64(0)
		post := func(gpus ...report.GPU) {
			t.Helper()
			seq++
			e.accept(e.tokens["n1"], report.Report{Version: report.Version, Node: "n1", At: e.clock.Now(), Run: "c", Seq: seq, Interval: 15,
				GPUs: gpus, Topology: topo, TopologyHash: topo.Hash()})
			e.clock.Advance(15 * time.Second)
		}
		others := []report.GPU{{Index: 0, UUID: "GPU-0", Util: f(0)}, {Index: 1, UUID: "GPU-1", Util: f(0)}, {Index: 2, UUID: "GPU-2", Util: f(0)}}
		for range 4 {
			post(others...) // GPU 3, the lease's, lost
		}
		gpuSecs, idle := e.usage()
		if gpuSecs[11] != 0 || idle[11] != 0 {
			t.Errorf("L-11 on a lost GPU: %v GPU-seconds observed, %v idle; want none observed", gpuSecs[11], idle[11])
		}
		post(append(others, report.GPU{Index: 3, UUID: "GPU-3", Util: f(0)})...)
		if gpuSecs, idle := e.usage(); gpuSecs[11] != 15 || idle[11] != 15 {
			t.Errorf("L-11 once its GPU reads again, idle: %v GPU-seconds observed, %v idle; want 15 and 15", gpuSecs[11], idle[11])
		}
	})
}
