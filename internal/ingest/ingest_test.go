package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// env is an ingest over a real store with a simulated clock and a fixed list of running leases.
type env struct {
	t      *testing.T
	db     *store.DB
	clock  *sim.Clock
	ing    *ingest.Ingest
	srv    *httptest.Server
	leases []*qm.Lease
	tokens map[string]string // node -> token
}

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func eachStore(t *testing.T, fn func(t *testing.T, url string)) {
	for _, b := range []struct {
		name string
		url  func(testing.TB) string
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.url(t))
		})
	}
}

func newEnv(t *testing.T, url string, leases ...*qm.Lease) *env {
	t.Helper()
	e := &env{t: t, db: storetest.Open(t, url), clock: sim.NewClock(t0), leases: leases, tokens: map[string]string{}}
	e.ing = ingest.New(ingest.Config{Store: e.db, Clock: e.clock, IdleBelow: 5, Logger: storetest.Logger(t),
		Leases: func(context.Context) ([]*qm.Lease, error) { return e.leases, nil },
		PodUIDs: func(_ context.Context, ref string) ([]string, error) {
			if ref == "pod/qm-vision/ws" {
				return []string{"5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"}, nil
			}
			return nil, nil
		}})
	e.serve(t, "n1", "n2")
	return e
}

// serve puts e's ingest behind a test server and gives each of nodes an agent token (e.tokens).
func (e *env) serve(t *testing.T, nodes ...string) {
	t.Helper()
	mux := http.NewServeMux()
	e.ing.Register(mux)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	for _, n := range nodes {
		tok, err := ingest.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if err := e.db.CreateAgentToken(t.Context(), n, ingest.HashToken(tok), t0); err != nil {
			t.Fatal(err)
		}
		e.tokens[n] = tok
	}
}

func f(v float64) *float64 { return &v }

func numa(n int) *int { return &n }

// topology of two GPUs joined by 4 NVLinks.
func topology() *report.Topology {
	return &report.Topology{GPUs: []report.TopologyGPU{
		{Index: 0, UUID: "GPU-0", NUMA: numa(0), CPUs: "0-15", NVLinks: []int{0, 4}, PCIe: []string{"X", "NODE"}},
		{Index: 1, UUID: "GPU-1", NUMA: numa(0), CPUs: "0-15", NVLinks: []int{4, 0}, PCIe: []string{"NODE", "X"}},
	}}
}

// rep is a report from n1 at the clock's time, with the topology.
func (e *env) rep(gpus ...report.GPU) report.Report {
	t := topology()
	return report.Report{Version: report.Version, Node: "n1", At: e.clock.Now(), Seq: 1, Interval: 10, GPUs: gpus, Topology: t, TopologyHash: t.Hash()}
}

// ownGPUs makes r node's report, with GPUs of its own: their UUIDs name the node.
func ownGPUs(r *report.Report, node string) {
	r.Node = node
	for k := range r.GPUs {
		r.GPUs[k].UUID = node + "-" + r.GPUs[k].UUID
	}
	if r.Topology != nil {
		for k := range r.Topology.GPUs {
			r.Topology.GPUs[k].UUID = node + "-" + r.Topology.GPUs[k].UUID
		}
		r.TopologyHash = r.Topology.Hash()
	}
}

// accept posts r with token and fails the test unless the service took it.
func (e *env) accept(token string, r report.Report) {
	e.t.Helper()
	if code, out := e.post(token, r); code != 200 || out["accepted"] != true {
		e.t.Fatalf("report of %s: %d %v", r.Node, code, out)
	}
}

// usage stores what was taken and adds up each lease's GPU-seconds and idle GPU-seconds in the
// hours from an hour before t0 to an hour after.
func (e *env) usage() (gpuSecs, idle map[qm.LeaseID]float64) {
	e.t.Helper()
	if err := e.ing.Flush(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
	use, err := e.db.Usage(e.t.Context(), t0.Add(-time.Hour), t0.Add(time.Hour))
	if err != nil {
		e.t.Fatal(err)
	}
	gpuSecs, idle = map[qm.LeaseID]float64{}, map[qm.LeaseID]float64{}
	for _, u := range use {
		gpuSecs[u.Lease] += u.GPUSeconds
		idle[u.Lease] += u.IdleGPUSeconds
	}
	return gpuSecs, idle
}

// post sends a report (or raw bytes) with a token and returns the status and the decoded answer.
func (e *env) post(token string, body any) (int, map[string]any) {
	e.t.Helper()
	var b []byte
	switch v := body.(type) {
	case []byte:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			e.t.Fatal(err)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+report.Path, bytes.NewReader(b))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func (e *env) samples() int {
	n, err := e.db.AgentSamples(context.Background(), "")
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// A report is mapped onto leases: a process of lease L-1's Slurm job and one of L-2's pod make
// them active; L-3, on the node with no process, is seen idle; a process of a job no lease owns
// and a GPU the topology lacks are skipped and counted. The usage rollups reach lease_usage_hourly
// and the topology is kept with its NVLink island.
func TestReportMappedOntoLeases(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{
			{ID: 1, State: qm.Active, GPUs: 1, Ref: "4711", Node: "n1"},
			{ID: 2, State: qm.Active, GPUs: 1, Ref: "pod/qm-vision/ws", Node: "n1"},
			{ID: 3, State: qm.Active, GPUs: 2, Ref: "4713", Node: "n1"},
			{ID: 4, State: qm.Active, GPUs: 1, Ref: "4714", Node: "n2"},
		}
		e := newEnv(t, url, leases...)
		r := e.rep(
			report.GPU{Index: 0, UUID: "GPU-0", Util: f(80), MemUsed: 10 << 30, MemTotal: 80 << 30,
				Processes: []report.Process{{PID: 1, Job: "4711", MemUsed: 9 << 30}, {PID: 2, Job: "999"}}},
			report.GPU{Index: 1, UUID: "GPU-1", Util: f(3), MemUsed: 1 << 30, MemTotal: 80 << 30,
				Processes: []report.Process{{PID: 3, Pod: "5f0b7a2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b", MemUsed: 1 << 30}, {PID: 4}}},
		)
		code, out := e.post(e.tokens["n1"], r)
		if code != 200 || out["accepted"] != true {
			t.Fatalf("status %d, %v", code, out)
		}
		skipped, _ := out["skipped"].(map[string]any)
		if skipped[ingest.UnknownJob] != 1.0 || len(skipped) != 1 {
			t.Errorf("skipped = %v; want one unknown job", skipped)
		}
		tel := ingest.Telemetry{Store: e.db}
		ctx := t.Context()
		a1, ok1 := tel.Activity(ctx, leases[0])
		a2, ok2 := tel.Activity(ctx, leases[1])
		a3, ok3 := tel.Activity(ctx, leases[2])
		_, ok4 := tel.Activity(ctx, leases[3])
		if !ok1 || !a1.Seen.Equal(t0) || !a1.LastActive.Equal(t0) || a1.Utilization != 80 {
			t.Errorf("L-1 (busy job on GPU 0): %+v %v", a1, ok1)
		}
		if !ok2 || !a2.LastActive.IsZero() || a2.Utilization != 3 {
			t.Errorf("L-2 (pod on GPU 1 at 3%%, under the 5%% threshold): %+v %v", a2, ok2)
		}
		if !ok3 || !a3.Seen.Equal(t0) || !a3.LastActive.IsZero() || a3.Utilization != 0 {
			t.Errorf("L-3 (on the node, no process): %+v %v; want seen and idle", a3, ok3)
		}
		if ok4 {
			t.Error("L-4 on another node has telemetry from n1's report")
		}
		if err := e.ing.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		use, err := e.db.Usage(ctx, t0, t0.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(use) != 3 || use[0].Lease != 1 || use[0].GPUSeconds != 10 || use[0].IdleGPUSeconds != 0 ||
			use[2].Lease != 3 || use[2].GPUSeconds != 20 || use[2].IdleGPUSeconds != 20 {
			t.Errorf("rollups = %+v; want L-1 10 busy GPU-s, L-3 20 idle GPU-s", use)
		}
		topo, err := e.db.NodeTopology(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n1 := topo["n1"]; len(n1.GPUs) != 2 || n1.GPUs[0].Island != n1.GPUs[1].Island || n1.GPUs[1].NVLinks[0] != 4 || n1.GPUs[0].PCIe[1] != qm.LevelNUMA {
			t.Errorf("n1's topology = %+v", n1)
		}
		// A GPU the topology lacks could be where a lease works: the report is kept but judges no
		// lease, and the agent is asked for its topology.
		e.clock.Advance(10 * time.Second)
		r2 := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0)}, report.GPU{Index: 2, UUID: "GPU-stranger", Util: f(50)})
		r2.Topology = nil
		code, out = e.post(e.tokens["n1"], r2)
		if skipped, _ := out["skipped"].(map[string]any); code != 200 || skipped[ingest.UnknownGPU] != 1.0 || out["topology_wanted"] != true {
			t.Errorf("a report with an unknown GPU: %d %v", code, out)
		}
		if a, _ := tel.Activity(ctx, leases[2]); !a.Seen.Equal(t0) {
			t.Errorf("L-3 was judged from a report with an unknown GPU: %+v", a)
		}
		c := e.ing.Counts()
		if c[ingest.Accepted] != 2 || c[ingest.UnknownJob] != 1 || c[ingest.UnknownGPU] != 1 {
			t.Errorf("counts = %v", c)
		}
	})
}

// Bad input is refused or ignored with a counted reason, never a crash, and stores nothing.
func TestBadReports(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newEnv(t, url)
		good := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(10)})
		if code, out := e.post(e.tokens["n1"], good); code != 200 || out["accepted"] != true {
			t.Fatalf("a good report: %d %v", code, out)
		}
		stored := e.samples()
		e.clock.Advance(10 * time.Second)
		mod := func(fn func(r *report.Report)) report.Report {
			r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(10)})
			fn(&r)
			return r
		}
		huge := []byte(`{"version":1,"node":"n1","driver":"` + strings.Repeat("x", report.MaxBytes) + `"}`)
		for _, tc := range []struct {
			name   string
			token  string
			body   any
			status int
			reason string
		}{
			{"no token", "", good, 401, ingest.Unauthorized},
			{"wrong token", "qma_nope", good, 401, ingest.Unauthorized},
			{"another node's token", e.tokens["n2"], good, 403, ingest.WrongNode},
			{"over 1 MB", e.tokens["n1"], huge, 413, ingest.TooLarge},
			{"not JSON", e.tokens["n1"], []byte(`{"version":1,`), 400, ingest.Malformed},
			{"another version", e.tokens["n1"], mod(func(r *report.Report) { r.Version = 2 }), 400, ingest.Malformed},
			{"utilization 150%", e.tokens["n1"], mod(func(r *report.Report) { r.GPUs[0].Util = f(150) }), 400, ingest.Malformed},
			{"a bad pod UID", e.tokens["n1"], mod(func(r *report.Report) { r.GPUs[0].Processes = []report.Process{{PID: 1, Pod: "../etc"}} }), 400, ingest.Malformed},
			{"a topology that does not add up", e.tokens["n1"], mod(func(r *report.Report) { r.Topology.GPUs[1].NVLinks = []int{1} }), 400, ingest.Malformed},
			{"no time", e.tokens["n1"], mod(func(r *report.Report) { r.At = time.Time{} }), 400, ingest.Malformed},
			{"dated 10 minutes ahead", e.tokens["n1"], mod(func(r *report.Report) { r.At = r.At.Add(10 * time.Minute) }), 422, ingest.Future},
			{"a replay", e.tokens["n1"], good, 200, ingest.Replayed},
			{"older than a day", e.tokens["n1"], mod(func(r *report.Report) { r.At = r.At.Add(-25 * time.Hour) }), 200, ingest.TooOld},
		} {
			before := e.ing.Counts()[tc.reason]
			code, out := e.post(tc.token, tc.body)
			if code != tc.status {
				t.Errorf("%s: status %d (%v), want %d", tc.name, code, out, tc.status)
			}
			if code >= 400 {
				if msg, _ := out["error"].(string); msg == "" {
					t.Errorf("%s: no sentence saying why", tc.name)
				}
			} else if out["accepted"] != false || out["ignored"] != tc.reason {
				t.Errorf("%s: answer %v, want ignored as %s", tc.name, out, tc.reason)
			}
			if got := e.ing.Counts()[tc.reason]; got != before+1 {
				t.Errorf("%s: %s counted %d times, want %d", tc.name, tc.reason, got, before+1)
			}
			if n := e.samples(); n != stored {
				t.Errorf("%s: %d samples stored, want %d (nothing new)", tc.name, n, stored)
			}
		}
		// A token revoked after it was checked (and cached) still stores nothing.
		if err := e.db.RevokeAgentToken(t.Context(), "n1", e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		if code, _ := e.post(e.tokens["n1"], e.rep(report.GPU{Index: 0, UUID: "GPU-0"})); code != 401 {
			t.Errorf("a revoked token: status %d, want 401", code)
		}
		if n := e.samples(); n != stored {
			t.Errorf("a revoked token stored %d samples", n-stored)
		}
	})
}

// A node's topology travels once: the service asks for it when it has none or an older one, or a
// report names a GPU the stored one lacks; the GPUs of a report without one are checked against the
// stored one.
func TestTopologyWanted(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(10)})
	r.Topology = nil
	if _, out := e.post(e.tokens["n1"], r); out["topology_wanted"] != true {
		t.Errorf("without a stored topology: %v, want it asked for", out)
	}
	e.clock.Advance(time.Second)
	if _, out := e.post(e.tokens["n1"], e.rep(report.GPU{Index: 0, UUID: "GPU-0"})); out["topology_wanted"] != nil {
		t.Errorf("with the topology: %v", out)
	}
	e.clock.Advance(time.Second)
	r = e.rep(report.GPU{Index: 0, UUID: "GPU-0"}, report.GPU{Index: 3, UUID: "GPU-9"})
	r.Topology = nil
	if _, out := e.post(e.tokens["n1"], r); out["topology_wanted"] != true || out["skipped"].(map[string]any)[ingest.UnknownGPU] != 1.0 {
		t.Errorf("a report with a GPU the stored topology lacks: %v; want it skipped and the topology asked for", out)
	}
	e.clock.Advance(time.Second)
	r = e.rep(report.GPU{Index: 0, UUID: "GPU-0"}, report.GPU{Index: 1, UUID: "GPU-1"})
	r.Topology = nil
	if _, out := e.post(e.tokens["n1"], r); out["topology_wanted"] != nil || out["skipped"] != nil {
		t.Errorf("a report of the stored topology's GPUs, with its hash: %v", out)
	}
}

func FuzzDecode(f *testing.F) {
	t := topology()
	good, _ := json.Marshal(report.Report{Version: 1, Node: "n1", At: t0, Interval: 10, Topology: t,
		GPUs: []report.GPU{{Index: 0, UUID: "GPU-0", Util: ptr(50), Processes: []report.Process{{PID: 1, Job: "12"}}}}})
	f.Add(good)
	f.Add([]byte(`{"version":1,"node":"n1","at":"2026-11-30T09:00:00Z","interval_s":10,"gpus":[{"index":70}]}`))
	f.Add([]byte(`{"version":1,"node":"n1","at":"2026-11-30T09:00:00Z","interval_s":10,"topology":{"gpus":[{"index":0,"uuid":"x","nvlinks":[],"pcie":[]}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ingest.Decode(b)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("an error of several lines: %q", err)
			}
			return
		}
		if r.Version != report.Version || len(r.GPUs) > 64 || r.Interval <= 0 {
			t.Fatalf("accepted %+v", r)
		}
		// What was accepted reads back the same once sent again, and keeps its topology hash.
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("accepted %+v, which does not encode: %v", r, err)
		}
		r2, err := ingest.Decode(again)
		if err != nil {
			t.Fatalf("accepted %q, but not %q: %v", b, again, err)
		}
		if back, _ := json.Marshal(r2); !r2.At.Equal(r.At) || r.Topology.Hash() != r2.Topology.Hash() || !bytes.Equal(back, again) {
			t.Fatalf("%q reads back as %q", again, back)
		}
		if r.Topology != nil {
			for _, g := range r.Topology.GPUs {
				if len(g.NVLinks) != len(r.Topology.GPUs) {
					t.Fatalf("accepted a ragged topology %+v", r.Topology)
				}
			}
			_ = ingest.Topology(r.Node, r.At, *r.Topology) // must not panic
		}
	})
}

func ptr(v float64) *float64 { return &v }

// A GPU that gives no utilization (a MIG-enabled A100/H100, where NVML says NOT_SUPPORTED, or a
// GPU whose reading failed) says nothing about whether the lease's work runs: a lease whose
// processes are only on such GPUs is not judged idle, however steady its memory. Once a GPU of
// the lease that does answer is busy, it is active as before; a lease on the node with no process
// at all is still seen idle.
func TestNoUtilizationIsNotIdle(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{
			{ID: 1, State: qm.Active, GPUs: 1, Ref: "8123", Node: "n1"},
			{ID: 2, State: qm.Active, GPUs: 1, Ref: "8124", Node: "n1"},
		}
		e := newEnv(t, url, leases...)
		tel := ingest.Telemetry{Store: e.db}
		for range 3 {
			e.accept(e.tokens["n1"], e.rep(
				report.GPU{Index: 0, UUID: "GPU-0", MemUsed: 30 << 30, MemTotal: 80 << 30,
					Processes: []report.Process{{PID: 7, Job: "8123", MemUsed: 30 << 30}}},
				report.GPU{Index: 1, UUID: "GPU-1", MemTotal: 80 << 30},
			))
			e.clock.Advance(10 * time.Second)
		}
		if a, ok := tel.Activity(t.Context(), leases[0]); ok && !a.Seen.IsZero() && a.LastActive.IsZero() {
			t.Errorf("L-1, whose only GPU gives no utilization, was judged idle: %+v", a)
		}
		if a, ok := tel.Activity(t.Context(), leases[1]); !ok || !a.LastActive.IsZero() {
			t.Errorf("L-2, on the node with no process: %+v %v; want seen and idle", a, ok)
		}
		if secs, idle := e.usage(); secs[1] != 0 || idle[1] != 0 || secs[2] != 30 || idle[2] != 30 {
			t.Errorf("usage: L-1 %v GPU-s, %v idle; L-2 %v, %v idle; want L-1 not observed (neither idle nor busy), L-2 30 GPU-s idle", secs[1], idle[1], secs[2], idle[2])
		}
	})
}

// A busy GPU that shows no process of any job or pod (a graphics or MPS client process NVML does
// not list as compute, or a process the agent cannot map) is someone's work the report cannot place:
// a lease on the node with no process of its own may be the one doing it, so it is not judged idle
// from that report, and its GPU time is not observed, idle or busy. A busy GPU that a job's process explains
// (a lease's, or a job no lease owns) leaves such a lease seen idle as before.
func TestABusyGPUWithNoJobJudgesNoLeaseWithoutProcesses(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{
			{ID: 1, State: qm.Active, GPUs: 1, Ref: "3101", Node: "n1"},
			{ID: 2, State: qm.Active, GPUs: 1, Ref: "3102", Node: "n1"},
		}
		e := newEnv(t, url, leases...)
		tel := ingest.Telemetry{Store: e.db}
		for _, busy := range []report.GPU{
			{Index: 0, UUID: "GPU-0", Util: f(97), MemUsed: 20 << 30, MemTotal: 80 << 30},
			{Index: 0, UUID: "GPU-0", Util: f(97), MemUsed: 20 << 30, MemTotal: 80 << 30, Processes: []report.Process{{PID: 5}}},
		} {
			e.accept(e.tokens["n1"], e.rep(busy,
				report.GPU{Index: 1, UUID: "GPU-1", Util: f(0), MemTotal: 80 << 30,
					Processes: []report.Process{{PID: 7, Job: "3102"}}}))
			e.clock.Advance(10 * time.Second)
		}
		if a, ok := tel.Activity(t.Context(), leases[0]); ok && !a.Seen.IsZero() {
			t.Errorf("L-1, on a node whose GPU 0 is busy with no job's process, was judged: %+v", a)
		}
		if a, ok := tel.Activity(t.Context(), leases[1]); !ok || !a.Seen.Equal(t0.Add(10*time.Second)) || !a.LastActive.IsZero() {
			t.Errorf("L-2, its process on GPU 1 at 0%%: %+v %v; want seen idle", a, ok)
		}
		if secs, idle := e.usage(); secs[1] != 0 || idle[1] != 0 {
			t.Errorf("L-1's usage = %v GPU-s, %v idle; want none observed (neither idle nor busy)", secs[1], idle[1])
		}
		// A job's process explains the busy GPU: L-1 is seen idle.
		e.accept(e.tokens["n1"], e.rep(
			report.GPU{Index: 0, UUID: "GPU-0", Util: f(97), Processes: []report.Process{{PID: 8, Job: "4242"}}},
			report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)}))
		if a, ok := tel.Activity(t.Context(), leases[0]); !ok || !a.Seen.Equal(e.clock.Now()) || !a.LastActive.IsZero() {
			t.Errorf("L-1, GPU 0 busy with another job: %+v %v; want seen idle", a, ok)
		}
	})
}

// A report that lacks a GPU of the node's topology (the agent could not read it: it fell off the
// bus, or NVML failed for it) cannot say what the leases on that GPU do: the sample is kept, a lease
// it shows busy is active, and no other lease of the node is judged from it, so a lease whose work
// ran on the missing GPU is not seen idle.
func TestAReportMissingAGPUJudgesNoLease(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{
			{ID: 1, State: qm.Active, GPUs: 1, Ref: "55", Node: "n1"},
			{ID: 2, State: qm.Active, GPUs: 1, Ref: "56", Node: "n1"},
		}
		e := newEnv(t, url, leases...)
		busy := report.GPU{Index: 1, UUID: "GPU-1", Util: f(90), Processes: []report.Process{{PID: 9, Job: "56"}}}
		if code, out := e.post(e.tokens["n1"], e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0)}, busy)); code != 200 || out["accepted"] != true {
			t.Fatalf("%d %v", code, out)
		}
		first := e.clock.Now()
		e.clock.Advance(10 * time.Second)
		r := e.rep(busy) // GPU 0, where lease 1's job runs, is missing
		r.Topology = nil
		before := e.samples()
		if code, out := e.post(e.tokens["n1"], r); code != 200 || out["accepted"] != true {
			t.Fatalf("%d %v", code, out)
		}
		if e.samples() != before+1 {
			t.Error("the sample was not kept")
		}
		tel := ingest.Telemetry{Store: e.db}
		if a, _ := tel.Activity(t.Context(), leases[0]); !a.Seen.Equal(first) {
			t.Errorf("L-1 was judged from a report missing GPU 0, where its job runs: %+v", a)
		}
		// What the report does show busy is busy: that never reclaims anything.
		if a, _ := tel.Activity(t.Context(), leases[1]); !a.LastActive.Equal(e.clock.Now()) {
			t.Errorf("L-2, busy on GPU 1: %+v; want seen active", a)
		}
	})
}

// Node names are host names: they match ignoring A-Z case. An agent started with the host's
// name in capitals (--node N1) reports with the token created for n1, and a lease the scheduler
// places on "N1" is covered by n1's reports.
func TestNodeNamesIgnoreCase(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{{ID: 1, State: qm.Active, GPUs: 1, Ref: "77", Node: "N1"}}
		e := newEnv(t, url, leases...)
		r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0)}, report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
		r.Node = "N1"
		if code, out := e.post(e.tokens["n1"], r); code != 200 || out["accepted"] != true {
			t.Fatalf("a report named N1 with n1's token: %d %v", code, out)
		}
		e.clock.Advance(10 * time.Second)
		if code, out := e.post(e.tokens["n1"], e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0)}, report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})); code != 200 || out["accepted"] != true || out["topology_wanted"] != nil {
			t.Fatalf("the next report named n1: %d %v", code, out)
		}
		if a, ok := (ingest.Telemetry{Store: e.db}).Activity(t.Context(), leases[0]); !ok || !a.Seen.Equal(e.clock.Now()) {
			t.Errorf("the lease on N1 was not covered by n1's report: %+v %v", a, ok)
		}
		if code, _ := e.post(e.tokens["n2"], r); code != 403 {
			t.Errorf("n2's token for a report of N1: %d, want 403", code)
		}
	})
}

// A lease over several nodes is reported by each of them, and each counts its share of the
// lease's GPUs: the shares add up to the lease's GPUs also where they do not divide evenly
// (3 GPUs over 2 nodes count 3 GPUs, not 2; 1 GPU over 2 nodes counts 1, not 2), and a node
// missing from the node list of a lease whose job went back to the queue (and may have started
// again elsewhere) counts the GPUs it shows the lease's processes on.
func TestUsageOfALeaseOverSeveralNodesAddsUp(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{
			{ID: 1, State: qm.Active, GPUs: 3, Ref: "4801", Node: "n[1-2]"},
			{ID: 2, State: qm.Active, GPUs: 1, Ref: "4802", Node: "n1,n2"},
			{ID: 3, State: qm.Active, GPUs: 4, Ref: "4803", Node: "n1,n2"},
			// Requeued, its node list lacks n1, where its job has a process on one GPU: n1 counts
			// that one.
			{ID: 4, State: qm.Active, GPUs: 2, Ref: "4804", Node: "n2,n3", Pauses: []qm.Pause{{Kind: qm.PauseRequeued, From: t0.Add(-time.Minute)}}},
		}
		e := newEnv(t, url, leases...)
		for _, node := range []string{"n1", "n2"} {
			r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(90), Processes: []report.Process{{PID: 1, Job: "4801"}}},
				report.GPU{Index: 1, UUID: "GPU-1", Util: f(0), Processes: []report.Process{{PID: 2, Job: "4804"}}})
			ownGPUs(&r, node)
			e.accept(e.tokens[node], r)
		}
		got, _ := e.usage()
		for _, l := range leases {
			if want := float64(l.GPUs) * 10; got[l.ID] != want {
				t.Errorf("%s (%d GPUs on %s), one 10 s report from each node: %v GPU-seconds, want %v", l.ID, l.GPUs, l.Node, got[l.ID], want)
			}
		}
	})
}

// A node reporting every 10 minutes (the agent's longest --interval) has each report count its
// whole interval in a lease's usage, as the showback adds it up: not half of it.
func TestUsageCountsALongIntervalWhole(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		l := &qm.Lease{ID: 1, State: qm.Active, GPUs: 1, Ref: "77", Node: "n1"}
		e := newEnv(t, url, l)
		r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(90), Processes: []report.Process{{PID: 1, Job: "77"}}})
		r.Interval = 600
		e.accept(e.tokens["n1"], r)
		if secs, _ := e.usage(); secs[1] != 600 {
			t.Errorf("one 10-minute report of a 1-GPU lease counts %v GPU-seconds, want 600", secs[1])
		}
	})
}

// A report that lists one GPU twice, under two indexes with one UUID, in its GPUs or in its
// topology, is refused as malformed and stores nothing: read as it stands, the GPU left out would
// count as seen, and a lease working on it could be judged idle.
func TestAReportThatListsOneGPUTwiceIsRefused(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	stored := e.samples()
	for _, name := range []string{"in its GPUs", "in its topology"} {
		e.clock.Advance(10 * time.Second)
		r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0)}, report.GPU{Index: 1, UUID: "GPU-0", Util: f(0)})
		if name == "in its topology" {
			r = e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0)})
			r.Topology.GPUs[1].UUID = "GPU-0"
			r.TopologyHash = r.Topology.Hash()
		}
		code, out := e.post(e.tokens["n1"], r)
		msg, _ := out["error"].(string)
		if code != 400 || !strings.Contains(msg, "GPU-0") || !strings.Contains(msg, "twice") {
			t.Errorf("a report listing GPU-0 twice %s: %d %v", name, code, out)
		}
	}
	if n := e.samples(); n != stored {
		t.Errorf("%d samples stored from refused reports", n-stored)
	}
}

// The first report after a lease started counts only the time since it started, not the node's
// whole interval: a lease that has run 2 minutes of a 10-minute interval has 2 minutes of use, so
// its idle time is never more than its GPU time.
func TestUsageStartsWhenTheLeaseStarted(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		l := &qm.Lease{ID: 1, State: qm.Active, GPUs: 1, Ref: "78", Node: "n1", StartedAt: t0.Add(-2 * time.Minute)}
		e := newEnv(t, url, l)
		r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0), Processes: []report.Process{{PID: 1, Job: "78"}}},
			report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
		r.Interval = 600
		e.accept(e.tokens["n1"], r)
		if secs, idle := e.usage(); secs[1] != 120 || idle[1] != 120 {
			t.Errorf("a lease 2 minutes old, idle, after one 10-minute report: %v GPU-seconds, %v idle; want 120 and 120", secs[1], idle[1])
		}
	})
}

// An agent that could not read one of the node's GPUs at start (it fell off the bus before the
// agent came up, so NVML gave not even its UUID) reports the topology with that GPU in its place,
// marked lost: the service takes the report instead of refusing it, and judges from it only what
// it shows busy, as for a GPU missing from a report.
func TestATopologyWithAGPULostAtStartIsTaken(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{
			{ID: 1, State: qm.Active, GPUs: 1, Ref: "55", Node: "n1"},
			{ID: 2, State: qm.Active, GPUs: 1, Ref: "56", Node: "n1"},
		}
		e := newEnv(t, url, leases...)
		topo := &report.Topology{GPUs: []report.TopologyGPU{
			{Index: 0, Lost: "no handle: GPU is lost", NVLinks: []int{0, 0}, PCIe: []string{"X", ""}},
			{Index: 1, UUID: "GPU-1", NUMA: numa(0), CPUs: "0-15", NVLinks: []int{0, 0}, PCIe: []string{"", "X"}},
		}}
		busy := report.GPU{Index: 1, UUID: "GPU-1", Util: f(90), Processes: []report.Process{{PID: 9, Job: "56"}}}
		r := report.Report{Version: report.Version, Node: "n1", At: e.clock.Now(), Seq: 1, Interval: 10,
			GPUs: []report.GPU{busy}, Topology: topo, TopologyHash: topo.Hash()}
		e.accept(e.tokens["n1"], r)
		tel := ingest.Telemetry{Store: e.db}
		if a, _ := tel.Activity(t.Context(), leases[0]); !a.Seen.IsZero() {
			t.Errorf("L-1 was judged from a report lacking GPU 0, which the agent cannot read: %+v", a)
		}
		if a, _ := tel.Activity(t.Context(), leases[1]); !a.LastActive.Equal(e.clock.Now()) {
			t.Errorf("L-2, busy on GPU 1: %+v; want seen active", a)
		}
	})
}

// A GPU in MIG mode comes with its MIG devices, each with its UUID, profile, memory and processes,
// and no utilization (NVML has none for them on the A100 and H100). The report is taken, and a
// lease with a process on a MIG slice is judged by that slice, never by the whole GPU's missing
// utilization: L-1, whose job runs on a slice that gives no utilization, is seen busy though its
// memory in use does not move (a training run's may not), and its GPU time is not counted idle;
// L-2, on the node with no process on any GPU or slice, is seen idle. A MIG device that is not valid — no UUID,
// one the report already lists, a utilization that is no percentage, a job id that is none — makes
// the report malformed, as for a GPU, and nothing is stored.
func TestMIGDevicesAreTakenAndJudgedByTheirSlices(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{
			{ID: 1, State: qm.Active, GPUs: 1, Ref: "8123", Node: "n1"},
			{ID: 2, State: qm.Active, GPUs: 1, Ref: "8124", Node: "n1"},
		}
		e := newEnv(t, url, leases...)
		used := uint64(8 << 30)
		none := uint64(0)
		proc := report.Process{PID: 7, Job: "8123", MemUsed: used}
		mig := func() report.GPU {
			return report.GPU{Index: 0, UUID: "GPU-0", MemUsed: used, MemTotal: 80 << 30, Processes: []report.Process{proc},
				MIG: []report.MIGDevice{
					{UUID: "MIG-0-a", GI: 1, CI: 0, Profile: "3g.40gb", MemUsed: &used, MemTotal: 40 << 30, Processes: []report.Process{proc}},
					{UUID: "MIG-0-b", GI: 2, CI: 0, Profile: "3g.40gb", MemUsed: &none, MemTotal: 40 << 30},
				}}
		}
		whole := report.GPU{Index: 1, UUID: "GPU-1", Util: f(0), MemTotal: 80 << 30}
		for range 3 {
			code, out := e.post(e.tokens["n1"], e.rep(mig(), whole))
			if code != 200 || out["accepted"] != true || out["skipped"] != nil {
				t.Fatalf("a report with MIG devices: %d %v; want it taken, nothing skipped", code, out)
			}
			e.clock.Advance(10 * time.Second)
		}
		tel := ingest.Telemetry{Store: e.db}
		if a, ok := tel.Activity(t.Context(), leases[0]); !ok || !a.Seen.Equal(e.clock.Now().Add(-10*time.Second)) || !a.LastActive.Equal(a.Seen) {
			t.Errorf("L-1, with a process on a MIG slice whose memory does not move: %+v %v; want seen and busy", a, ok)
		}
		if a, ok := tel.Activity(t.Context(), leases[1]); !ok || a.Seen.IsZero() || !a.LastActive.IsZero() {
			t.Errorf("L-2, on the node with no process on any GPU or MIG slice: %+v %v; want seen and idle", a, ok)
		}
		if _, idle := e.usage(); idle[1] != 0 || idle[2] != 30 {
			t.Errorf("idle GPU-seconds = %v; want none for L-1 and 30 for L-2", idle)
		}

		stored := e.samples()
		for name, spoil := range map[string]func(g *report.GPU){
			"no UUID":                 func(g *report.GPU) { g.MIG[1].UUID = "" },
			"the GPU's UUID":          func(g *report.GPU) { g.MIG[1].UUID = "GPU-1" },
			"another MIG device's":    func(g *report.GPU) { g.MIG[1].UUID = "MIG-0-a" },
			"utilization 150":         func(g *report.GPU) { g.MIG[0].Util = f(150) },
			"a job id that is none":   func(g *report.GPU) { g.MIG[0].Processes[0].Job = "job 8123" },
			"a negative GPU instance": func(g *report.GPU) { g.MIG[1].GI = -1 },
		} {
			g := mig()
			spoil(&g)
			e.clock.Advance(10 * time.Second)
			if code, out := e.post(e.tokens["n1"], e.rep(g, whole)); code != 400 {
				t.Errorf("a MIG device with %s: %d %v; want 400", name, code, out)
			}
		}
		if n := e.samples(); n != stored {
			t.Errorf("%d samples stored from refused reports", n-stored)
		}
	})
}

// A 401 tells the agent's operator the command that mends it for the node the report names, not a
// placeholder: `agent-token create n1` for a report of n1, with no token, an unknown one, or one
// revoked after it was checked; a body that names no node keeps NODE.
func TestUnauthorizedNamesTheReportsNode(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	good := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(10)})
	for _, tc := range []struct {
		name, token string
		body        any
		want        string
	}{
		{"no token", "", good, "`quartermaster agent-token create n1`"},
		{"an unknown token", "qma_nope", good, "`quartermaster agent-token create n1`"},
		{"not JSON", "qma_nope", []byte(`{"node":`), "`quartermaster agent-token create NODE`"},
		{"not a node name", "qma_nope", []byte(`{"node":"n1; rm -rf /"}`), "`quartermaster agent-token create NODE`"},
	} {
		code, out := e.post(tc.token, tc.body)
		if msg, _ := out["error"].(string); code != 401 || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %d %q, want 401 saying %s", tc.name, code, msg, tc.want)
		}
	}
	e.accept(e.tokens["n1"], good)
	if err := e.db.RevokeAgentToken(t.Context(), "n1", e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(10 * time.Second)
	later := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(10)})
	later.Seq = 2
	if code, out := e.post(e.tokens["n1"], later); code != 401 || !strings.Contains(fmt.Sprint(out["error"]), "`quartermaster agent-token create n1`") {
		t.Errorf("a revoked token: %d %v, want 401 naming n1", code, out)
	}
}

// A node reports its own GPUs: a report whose topology lists a GPU another node's agent reports
// (an agent started with the wrong --node and that node's token, or two nodes given one name) is
// refused with 403 and stores nothing, so it can neither keep that node's leases busy nor replace
// this node's topology with GPUs it does not have. A GPU that moved is taken once its old node no
// longer reports (its token revoked).
func TestAReportOfAnotherNodesGPUsIsRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		leases := []*qm.Lease{{ID: 7, State: qm.Active, GPUs: 2, Ref: "5120", Node: "n1"}}
		e := newEnv(t, url, leases...)
		idle := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0), Processes: []report.Process{{PID: 9, Job: "5120"}}},
			report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
		e.accept(e.tokens["n1"], idle)
		stored := e.samples()
		e.clock.Advance(10 * time.Second)
		busy := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(95), Processes: []report.Process{{PID: 9, Job: "5120"}}},
			report.GPU{Index: 1, UUID: "GPU-1", Util: f(95)})
		busy.Node = "n2"
		code, out := e.post(e.tokens["n2"], busy)
		if msg, _ := out["error"].(string); code != 403 || !strings.Contains(msg, "n1") || !strings.Contains(msg, "GPU-0") {
			t.Errorf("n2 reporting n1's GPUs: %d %v; want 403 naming the GPU and its node", code, out)
		}
		if c := e.ing.Counts()[ingest.WrongNode]; c != 1 {
			t.Errorf("wrong_node counted %d times, want 1", c)
		}
		if n := e.samples(); n != stored {
			t.Errorf("%d samples stored from n2's report", n-stored)
		}
		if a, _ := (ingest.Telemetry{Store: e.db}).Activity(t.Context(), leases[0]); !a.LastActive.IsZero() {
			t.Errorf("n2's report made n1's lease busy: %+v", a)
		}
		if _, _, ok, _ := e.db.NodeTopologyOf(t.Context(), "n2"); ok {
			t.Error("n2's topology was replaced by n1's GPUs")
		}
		// The GPUs moved to n2 and n1 is retired: n2's report is taken.
		if err := e.db.RevokeAgentToken(t.Context(), "n1", e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(10 * time.Second)
		busy.At = e.clock.Now()
		busy.GPUs[0].Processes = nil
		e.accept(e.tokens["n2"], busy)
	})
}

// A lease over several nodes whose processes hold memory and do nothing (a hung two-node job at
// 0 %) is idle: each node's memory in use stays put, and the difference between one node's and
// the other's (40 GiB here, 20 GiB there) is not memory that changed.
func TestAMultiNodeLeaseHoldingMemoryIsIdle(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		l := &qm.Lease{ID: 3, State: qm.Active, GPUs: 2, Ref: "6001", Node: "n[1-2]"}
		e := newEnv(t, url, l)
		for range 4 {
			for _, node := range []string{"n1", "n2"} {
				mem := map[string]uint64{"n1": 40 << 30, "n2": 20 << 30}[node]
				r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0), MemUsed: mem, Processes: []report.Process{{PID: 11, Job: "6001", MemUsed: mem}}},
					report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
				ownGPUs(&r, node)
				e.accept(e.tokens[node], r)
				e.clock.Advance(5 * time.Second) // the nodes' agents are not in step
			}
		}
		a, ok := (ingest.Telemetry{Store: e.db}).Activity(t.Context(), l)
		if !ok || !a.LastActive.IsZero() {
			t.Errorf("a two-node lease at 0%% with 40 GiB on one node and 20 GiB on the other: %+v %v; want seen, never active", a, ok)
		}
	})
}
