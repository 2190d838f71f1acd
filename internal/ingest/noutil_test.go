package ingest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/qm"
)

// reportNoUtil posts l40s-01's report with the lease's job on GPU 0, which gives no utilization
// (NVML's NOT_SUPPORTED: the agent reports the GPU without it).
func (e *idleEnv) reportNoUtil(l *qm.Lease) {
	e.t.Helper()
	e.seq++
	topo := topology()
	r := report.Report{Version: report.Version, Node: idleNode, At: e.clock.Now(), Seq: e.seq, Interval: 60, TopologyHash: topo.Hash(), Topology: topo,
		GPUs: []report.GPU{
			{Index: 0, UUID: "GPU-0", MemUsed: 4 << 30, Processes: []report.Process{{PID: 7, Job: fmt.Sprint(9000 + int(l.ID)), MemUsed: 4 << 30}}},
			{Index: 1, UUID: "GPU-1", Util: f(0)},
		}}
	b, err := json.Marshal(r)
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+report.Path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("report: status %d", resp.StatusCode)
	}
}

// A lease whose GPU gives no utilization, on a node whose agent reports normally, is not
// reclaimed, and the platform channel is told once that its GPU reports no utilization, not that
// its telemetry is missing. When the agent then stops reporting, that is told too.
func TestAGPUWithoutUtilizationIsNotMissingTelemetry(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newIdleEnv(t, url)
		l := e.start()
		for range 60 { // an hour, past the class's idle_timeout
			e.reportNoUtil(l)
			e.tick()
			e.clock.Advance(time.Minute)
		}
		n := e.notes.Of(qm.NoticeTelemetryMissing, l.ID)
		if got := e.lease(l.ID); got.State != qm.Active || len(n) != 1 {
			t.Fatalf("a lease whose GPU gives no utilization: %s, %d notices; want active, told once", got.State, len(n))
		}
		if n[0].Reason != qm.UnjudgedNoUtilization {
			t.Errorf("the notice of a lease whose GPU gives no utilization says %q; want %q (its node reports)", n[0].Reason, qm.UnjudgedNoUtilization)
		}
		for range 60 { // the agent stops
			e.tick()
			e.clock.Advance(time.Minute)
		}
		n = e.notes.Of(qm.NoticeTelemetryMissing, l.ID)
		if len(n) != 2 || n[1].Reason != "" {
			t.Errorf("after the agent stopped: %d notices (%+v); want a second, of missing telemetry", len(n), n)
		}
	})
}

// reportGPUs posts l40s-01's report of the given GPUs.
func (e *idleEnv) reportGPUs(gpus ...report.GPU) {
	e.t.Helper()
	e.seq++
	topo := topology()
	r := report.Report{Version: report.Version, Node: idleNode, At: e.clock.Now(), Seq: e.seq, Interval: 60, TopologyHash: topo.Hash(), Topology: topo, GPUs: gpus}
	b, err := json.Marshal(r)
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+report.Path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("report: status %d", resp.StatusCode)
	}
}

// unjudgedFor reports with gpus (made for lease l) for an hour, past the class's idle_timeout,
// and returns the platform channel's notices of l as unjudged; the lease must still be active.
func (e *idleEnv) unjudgedFor(l *qm.Lease, gpus func() []report.GPU) []qm.Notice {
	e.t.Helper()
	for range 60 {
		e.reportGPUs(gpus()...)
		e.tick()
		e.clock.Advance(time.Minute)
	}
	if got := e.lease(l.ID); got.State != qm.Active {
		e.t.Fatalf("lease %s is %s; want active (it cannot be judged)", l.ID, got.State)
	}
	return e.notes.Of(qm.NoticeTelemetryMissing, l.ID)
}

// A lease whose GPU is missing from its node's reports (it fell off the bus, or NVML failed for
// it) while the node's other GPUs are reported is not reclaimed, and the platform channel is told
// once that the lease's GPU is missing from its node's reports, not that its telemetry is missing.
func TestALeasesGPUMissingFromItsNodesReportsIsNotMissingTelemetry(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newIdleEnv(t, url)
		l := e.start()
		if len(l.GPUIndex) != 1 {
			t.Fatalf("lease %s holds GPUs %v; want one", l.ID, l.GPUIndex)
		}
		other := 1 - l.GPUIndex[0]
		n := e.unjudgedFor(l, func() []report.GPU {
			return []report.GPU{{Index: other, UUID: fmt.Sprintf("GPU-%d", other), Util: f(0)}}
		})
		if len(n) != 1 || n[0].Reason != qm.UnjudgedGPUMissing {
			t.Fatalf("a lease whose GPU is missing from its node's reports: %+v; want one notice with reason %q", n, qm.UnjudgedGPUMissing)
		}
		if got := e.lease(l.ID); got.Reason == "no telemetry" {
			t.Errorf("/gpu status shows the lease with %q; its node reports", got.Reason)
		}
	})
}

// A lease with no process on any GPU, while a GPU of its node is busy with no job's process (a
// graphics or MPS client, or a process the agent could not map), is not reclaimed, and the
// platform channel is told once that whose that work is cannot be told, not that its telemetry is
// missing.
func TestALeaseBesideUnplacedBusyWorkIsNotMissingTelemetry(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newIdleEnv(t, url)
		l := e.start()
		n := e.unjudgedFor(l, func() []report.GPU {
			return []report.GPU{
				{Index: 0, UUID: "GPU-0", Util: f(90), MemUsed: 4 << 30, Processes: []report.Process{{PID: 7, MemUsed: 4 << 30}}},
				{Index: 1, UUID: "GPU-1", Util: f(0)},
			}
		})
		if len(n) != 1 || n[0].Reason != qm.UnjudgedUnplacedBusy {
			t.Fatalf("a lease beside busy work of no job: %+v; want one notice with reason %q", n, qm.UnjudgedUnplacedBusy)
		}
		if got := e.lease(l.ID); got.Reason == "no telemetry" {
			t.Errorf("/gpu status shows the lease with %q; its node reports", got.Reason)
		}
	})
}

// A lease whose own GPU is reported idle while another GPU of its node is missing from the report
// may work on that one: it is not reclaimed, and the platform channel is told once that a GPU of
// its node it may work on is missing, not that the lease's own is, nor that its telemetry is.
func TestALeaseBesideAGPUMissingFromItsNodesReportsIsNotMissingTelemetry(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newIdleEnv(t, url)
		l := e.start()
		if len(l.GPUIndex) != 1 {
			t.Fatalf("lease %s holds GPUs %v; want one", l.ID, l.GPUIndex)
		}
		own := l.GPUIndex[0]
		n := e.unjudgedFor(l, func() []report.GPU {
			return []report.GPU{{Index: own, UUID: fmt.Sprintf("GPU-%d", own), Util: f(0), MemUsed: 4 << 30,
				Processes: []report.Process{{PID: 7, Job: fmt.Sprint(9000 + int(l.ID)), MemUsed: 4 << 30}}}}
		})
		if len(n) != 1 || n[0].Reason != qm.UnjudgedNodeGPUMissing {
			t.Fatalf("a lease beside a GPU missing from its node's reports: %+v; want one notice with reason %q", n, qm.UnjudgedNodeGPUMissing)
		}
	})
}

// A lease on a node whose reports list every GPU of its topology and also one the topology lacks
// (a GPU swapped in since the topology was taken) may work on that one: it is not reclaimed, and
// the platform channel is told once that the node reports a GPU its topology does not list, not
// that the lease's telemetry is missing: its node reports.
func TestALeaseBesideAGPUItsNodesTopologyLacksIsNotMissingTelemetry(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newIdleEnv(t, url)
		l := e.start()
		n := e.unjudgedFor(l, func() []report.GPU {
			return []report.GPU{
				{Index: 0, UUID: "GPU-0", Util: f(0)},
				{Index: 1, UUID: "GPU-1", Util: f(0)},
				{Index: 2, UUID: "GPU-swapped-in", Util: f(0)},
			}
		})
		if len(n) != 1 || n[0].Reason != qm.UnjudgedUnknownGPU {
			t.Fatalf("a lease beside a GPU its node's topology lacks: %+v; want one notice with reason %q", n, qm.UnjudgedUnknownGPU)
		}
		if got := e.lease(l.ID); got.Reason == "no telemetry" {
			t.Errorf("/gpu status shows the lease with %q; its node reports", got.Reason)
		}
	})
}
