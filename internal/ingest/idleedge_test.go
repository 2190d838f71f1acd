package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/qm/qmtest"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// labPolicy is a site's own catalog, not the example's: notebooks (`nb`, one GPU) are warned after
// 10 minutes idle and have no grace of their own; `multi` leases (up to four GPUs) after 20 minutes,
// with 5 minutes to answer; `batch` never has idle reclaim.
const labPolicy = `organization: Lab
timezone: UTC
idle: {utilization_below: 10}
classes:
  - {name: nb, max_gpus: 1, max_duration: 12h, price_per_gpu_hour: 1, idle_timeout: 10m, idle_grace: 0s}
  - {name: multi, max_gpus: 4, max_duration: 12h, price_per_gpu_hour: 2, idle_timeout: 20m, idle_grace: 5m}
  - {name: batch, max_gpus: 4, max_duration: 12h, price_per_gpu_hour: 2, idle_timeout: 0}
default_quota: {gpus: {nb: 4, multi: 4, batch: 4}, gpu_hours_per_week: 1000}
teams:
  - {name: lab, idp_groups: [lab], budget_owners: [boss@lab.example], quota: {gpus: {nb: 4, multi: 4, batch: 4}, gpu_hours_per_week: 1000}}
directory:
  - {user: bo@lab.example, groups: [lab]}
  - {user: boss@lab.example, groups: [lab]}
reports: {showback: {platform_channel: "#ops"}}
sim:
  nodes:
    - {name: box, count: 1, class: multi, gpus: 4}
    - {name: nbx, count: 1, class: nb, gpus: 4}
    - {name: bx, count: 1, class: batch, gpus: 4}
`

// labEnv drives the lease service on labPolicy with telemetry from node agents' reports, posted to
// the real ingest handler; a lease's Slurm job id is 7000 plus its number.
type labEnv struct {
	t      *testing.T
	svc    *qm.Service
	clock  *sim.Clock
	notes  *qmtest.NoticeLog
	srv    *httptest.Server
	tokens map[string]string
	seq    uint64
}

func newLabEnv(t *testing.T, url string) *labEnv {
	t.Helper()
	p, err := policy.Load([]byte(labPolicy), "lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.Open(t, url)
	e := &labEnv{t: t, clock: sim.NewClock(t0), notes: &qmtest.NoticeLog{}, tokens: map[string]string{}}
	e.svc = &qm.Service{Policy: p, Store: db, Backend: sim.New(p, e.clock), Clock: e.clock, Directory: p, Notifier: e.notes,
		Telemetry: ingest.Telemetry{Store: db}, Logger: storetest.Logger(t)}
	ing := ingest.New(ingest.Config{Store: db, Clock: e.clock, IdleBelow: p.Idle.UtilizationBelow, Logger: storetest.Logger(t),
		Leases: func(ctx context.Context) ([]*qm.Lease, error) {
			ls, err := e.svc.List(ctx, qm.LeaseFilter{States: []qm.State{qm.Active, qm.IdleWarned}})
			for i, l := range ls {
				c := *l
				c.Ref = fmt.Sprint(7000 + int(l.ID))
				ls[i] = &c
			}
			return ls, err
		}, IndexEvery: time.Nanosecond})
	mux := http.NewServeMux()
	ing.Register(mux)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	for _, n := range []string{"box-01", "nbx-01"} {
		tok, err := ingest.NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if err := db.CreateAgentToken(t.Context(), n, ingest.HashToken(tok), t0); err != nil {
			t.Fatal(err)
		}
		e.tokens[n] = tok
	}
	return e
}

func (e *labEnv) start(class string, gpus int) *qm.Lease {
	e.t.Helper()
	out, err := e.svc.Request(context.Background(), qm.LeaseRequest{User: "bo@lab.example", GPUs: gpus, Class: class, Duration: 8 * time.Hour})
	if err != nil {
		e.t.Fatal(err)
	}
	if out.Lease.State != qm.Active {
		e.t.Fatalf("lease %s is %s; want active", out.Lease.ID, out.Lease.State)
	}
	return out.Lease
}

// gpu is what the agent reads of one GPU: its utilization (nil: none, as in MIG mode) and the
// memory the lease's process holds on it (none: no process of the lease).
type gpu struct {
	util *float64
	mem  uint64
}

// report posts the node's report of lease l's GPUs, taken now, from an agent reporting every
// minute. GPUs are indexed from 0; the node's other GPUs are idle with no process.
func (e *labEnv) report(l *qm.Lease, gs ...gpu) {
	e.t.Helper()
	e.seq++
	topo := &report.Topology{}
	var rgs []report.GPU
	for k := range 4 {
		topo.GPUs = append(topo.GPUs, report.TopologyGPU{Index: k, UUID: fmt.Sprintf("GPU-%s-%d", l.Node, k), NUMA: numa(0), CPUs: "0-15",
			NVLinks: []int{0, 0, 0, 0}, PCIe: []string{"NODE", "NODE", "NODE", "NODE"}})
		topo.GPUs[k].PCIe[k] = "X"
		g := report.GPU{Index: k, UUID: fmt.Sprintf("GPU-%s-%d", l.Node, k), Util: f(0)}
		if k < len(gs) {
			g.Util = gs[k].util
			if gs[k].mem > 0 {
				g.MemUsed = gs[k].mem
				g.Processes = []report.Process{{PID: uint32(100 + k), Job: fmt.Sprint(7000 + int(l.ID)), MemUsed: gs[k].mem}}
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

// minute moves the clock a minute and runs the tick.
func (e *labEnv) minute() {
	e.t.Helper()
	e.clock.Advance(time.Minute)
	if err := e.svc.Tick(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func (e *labEnv) tick() {
	e.t.Helper()
	if err := e.svc.Tick(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func (e *labEnv) lease(id qm.LeaseID) *qm.Lease {
	e.t.Helper()
	l, err := e.svc.Get(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

const gib = 1 << 30

// A 4-GPU lease whose training runs on one GPU (90 %) while its other three sit at 0 % is working:
// in two hours, far past its class's 20m idle_timeout, its owner gets no idle warning and it is
// not reclaimed.
func TestAMultiGPULeaseWithOneBusyGPUIsNotIdle(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newLabEnv(t, url)
		l := e.start("multi", 4)
		for range 120 {
			e.report(l, gpu{f(0), 2 * gib}, gpu{f(0), 2 * gib}, gpu{f(90), 2 * gib}, gpu{f(0), 2 * gib})
			e.minute()
		}
		if got := e.lease(l.ID); got.State != qm.Active || len(e.notes.Of(qm.NoticeIdleWarning, l.ID)) != 0 {
			t.Errorf("a 4-GPU lease with one GPU at 90%% is %s with %d idle warnings; want active, never warned", got.State, len(e.notes.Of(qm.NoticeIdleWarning, l.ID)))
		}
	})
}

// A notebook lease (idle_timeout 10m) is idle from the start while its workspace starts: it is
// not warned before 10 minutes have passed since it started, and is warned once they have.
func TestANewLeaseIsNotWarnedBeforeItsIdleTimeout(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newLabEnv(t, url)
		l := e.start("nb", 1)
		for range 9 {
			e.report(l, gpu{f(0), 0})
			e.minute()
		}
		if n := e.notes.Of(qm.NoticeIdleWarning, l.ID); len(n) != 0 {
			t.Fatalf("a lease 9 minutes old was warned as idle; its class's idle_timeout is 10m")
		}
		e.report(l, gpu{f(0), 0})
		e.minute()
		e.report(l, gpu{f(0), 0}) // seen idle 10 minutes after the start
		e.tick()
		if got := e.lease(l.ID); got.State != qm.IdleWarned {
			t.Errorf("a lease idle for its whole first 10 minutes is %s; want warned", got.State)
		}
	})
}

// A notebook kernel holding a model (4 GiB) and doing nothing is idle even when its memory in use
// wobbles by a few MiB from one reading to the next; one loading data (memory moving by hundreds of
// MiB) is not.
func TestMemoryNoiseIsNotActivity(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newLabEnv(t, url)
		noisy := e.start("nb", 1)
		for k := range 15 {
			e.report(noisy, gpu{f(0), 4*gib + uint64(k%3)*3<<20})
			e.tick()
			e.minute()
		}
		if n := e.notes.Of(qm.NoticeIdleWarning, noisy.ID); len(n) != 1 {
			t.Errorf("a lease at 0%% whose memory wobbles by 3 MiB: %d idle warnings in 15 minutes; want 1 (idle_timeout 10m)", len(n))
		}
		loading := e.start("nb", 1)
		for k := range 15 {
			e.report(loading, gpu{f(0), 4*gib + uint64(k%2)*512<<20})
			e.tick()
			e.minute()
		}
		if got := e.lease(loading.ID); got.State != qm.Active || len(e.notes.Of(qm.NoticeIdleWarning, loading.ID)) != 0 {
			t.Errorf("a lease whose memory moves by 512 MiB at each reading is %s; want active, never warned", got.State)
		}
	})
}

// An owner who answers an idle warning by extending the lease wants it: it is not reclaimed when
// the grace runs out, and it is warned again only after another whole idle_timeout. Keep does the
// same.
func TestAnExtensionOrAKeepDuringTheGraceKeepsTheLease(t *testing.T) {
	for _, answer := range []string{"extend", "keep"} {
		t.Run(answer, func(t *testing.T) {
			eachStore(t, func(t *testing.T, url string) {
				e := newLabEnv(t, url)
				l := e.start("multi", 1)
				for e.lease(l.ID).State == qm.Active && e.clock.Now().Before(t0.Add(time.Hour)) {
					e.report(l, gpu{f(0), 4 * gib})
					e.tick()
					e.minute()
				}
				if e.lease(l.ID).State != qm.IdleWarned {
					t.Fatalf("an idle lease is %s after an hour; want warned", e.lease(l.ID).State)
				}
				e.report(l, gpu{f(0), 4 * gib})
				e.minute()
				answered := e.clock.Now()
				switch answer {
				case "extend":
					if _, err := e.svc.Extend(t.Context(), "bo@lab.example", l.ID, time.Hour); err != nil {
						t.Fatal(err)
					}
				case "keep":
					if _, err := e.svc.Keep(t.Context(), "bo@lab.example", l.ID); err != nil {
						t.Fatal(err)
					}
				}
				for e.clock.Now().Before(answered.Add(19 * time.Minute)) {
					e.report(l, gpu{f(0), 4 * gib})
					e.tick()
					if got := e.lease(l.ID); got.State != qm.Active {
						t.Fatalf("%s after the owner's %s the lease is %s; want active for another whole idle_timeout (20m)", e.clock.Now().Sub(answered), answer, got.State)
					}
					e.minute()
				}
				for range 2 {
					e.report(l, gpu{f(0), 4 * gib})
					e.tick()
					e.minute()
				}
				if got := e.lease(l.ID); got.State != qm.IdleWarned {
					t.Errorf("idle 21 minutes after the %s, the lease is %s; want warned again", answer, got.State)
				}
			})
		})
	}
}

// An owner who releases a lease during the grace ends it then: it is billed up to the release, is
// not counted as reclaimed, and gets no reclaim notice when the grace would have run out.
func TestAReleaseDuringTheGraceBillsUpToTheRelease(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newLabEnv(t, url)
		l := e.start("multi", 2)
		for e.lease(l.ID).State == qm.Active && e.clock.Now().Before(t0.Add(time.Hour)) {
			e.report(l, gpu{f(0), gib}, gpu{f(0), gib})
			e.tick()
			e.minute()
		}
		e.minute()
		released := e.clock.Now()
		if _, err := e.svc.Release(t.Context(), "bo@lab.example", l.ID); err != nil {
			t.Fatal(err)
		}
		for range 10 {
			e.minute()
		}
		got := e.lease(l.ID)
		if got.State != qm.Released || !got.EndedAt.Equal(released) || got.Reclaimed != 0 || len(e.notes.Of(qm.NoticeReclaimed, l.ID)) != 0 {
			t.Errorf("released during the grace: %s, ended %s (released %s), %.2f GPU-hours reclaimed, %d reclaim notices; want released then, none reclaimed",
				got.State, got.EndedAt, released, got.Reclaimed, len(e.notes.Of(qm.NoticeReclaimed, l.ID)))
		}
	})
}

// A class with idle_timeout 0 has no idle reclaim: an idle lease of it is never warned, and one
// whose node sends no telemetry is not reported to the platform channel, as there is nothing to
// judge.
func TestAClassWithoutIdleTimeoutIsNeverJudged(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newLabEnv(t, url)
		l := e.start("batch", 1)
		for range 180 {
			e.minute()
		}
		if got := e.lease(l.ID); got.State != qm.Active || len(e.notes.Of(qm.NoticeIdleWarning, l.ID)) != 0 || len(e.notes.Of(qm.NoticeTelemetryMissing, l.ID)) != 0 {
			t.Errorf("a lease of a class without idle_timeout: %s, %d idle warnings, %d telemetry notices; want active and none",
				got.State, len(e.notes.Of(qm.NoticeIdleWarning, l.ID)), len(e.notes.Of(qm.NoticeTelemetryMissing, l.ID)))
		}
	})
}

// A lease whose process runs on a GPU that gives no utilization and no MIG device of its own (a
// reading that failed, or a GPU in MIG mode whose MIG devices the agent could not read) cannot be
// judged idle: it is never warned or reclaimed, and the platform channel is told once, not at
// every tick.
func TestALeaseOnAGPUWithoutUtilizationIsNotReclaimed(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newLabEnv(t, url)
		l := e.start("nb", 1)
		for range 60 {
			e.report(l, gpu{nil, 4 * gib})
			e.tick()
			e.minute()
		}
		if got := e.lease(l.ID); got.State != qm.Active || len(e.notes.Of(qm.NoticeIdleWarning, l.ID)) != 0 || len(e.notes.Of(qm.NoticeTelemetryMissing, l.ID)) != 1 {
			t.Errorf("a lease whose process runs on a GPU without utilization: %s, %d idle warnings, %d telemetry notices; want active, none, 1",
				got.State, len(e.notes.Of(qm.NoticeIdleWarning, l.ID)), len(e.notes.Of(qm.NoticeTelemetryMissing, l.ID)))
		}
	})
}
