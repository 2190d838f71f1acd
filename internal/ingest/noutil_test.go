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
