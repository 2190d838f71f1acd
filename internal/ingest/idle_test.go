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
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// idleEnv is the idle path fed by the ingest: the lease service on the simulated cluster (for the
// leases' lifecycle only) whose telemetry is what node l40s-01's reports, posted over HTTP to the
// real ingest handler, recorded. Each lease's Slurm job id is 9000 plus its number.
type idleEnv struct {
	t     *testing.T
	svc   *qm.Service
	db    *store.DB
	clock *sim.Clock
	notes *qmtest.NoticeLog
	srv   *httptest.Server
	token string
	seq   uint64
}

const idleNode = "l40s-01"

func newIdleEnv(t *testing.T, url string) *idleEnv {
	t.Helper()
	p, err := policy.LoadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Reports.Showback.PlatformChannel = "#gpu-platform"
	db := storetest.Open(t, url)
	e := &idleEnv{t: t, db: db, clock: sim.NewClock(t0), notes: &qmtest.NoticeLog{}}
	e.svc = &qm.Service{Policy: p, Store: db, Backend: sim.New(p, e.clock), Clock: e.clock, Directory: p, Notifier: e.notes,
		Telemetry: ingest.Telemetry{Store: db}, Logger: storetest.Logger(t)}
	ing := ingest.New(ingest.Config{Store: db, Clock: e.clock, IdleBelow: p.Idle.UtilizationBelow, Logger: storetest.Logger(t),
		Leases: func(ctx context.Context) ([]*qm.Lease, error) {
			ls, err := e.svc.List(ctx, qm.LeaseFilter{States: []qm.State{qm.Active, qm.IdleWarned}})
			for i, l := range ls {
				c := *l
				c.Ref = fmt.Sprint(9000 + int(l.ID))
				ls[i] = &c
			}
			return ls, err
		}, IndexEvery: time.Nanosecond})
	mux := http.NewServeMux()
	ing.Register(mux)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	if e.token, err = ingest.NewToken(); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateAgentToken(t.Context(), idleNode, ingest.HashToken(e.token), t0); err != nil {
		t.Fatal(err)
	}
	return e
}

// start requests a 1-GPU interactive lease for 8 hours; the simulated cluster starts it at once
// on l40s-01.
func (e *idleEnv) start() *qm.Lease {
	e.t.Helper()
	out, err := e.svc.Request(context.Background(), qm.LeaseRequest{User: "alice@acme.example", GPUs: 1, Class: "interactive", Duration: 8 * time.Hour})
	if err != nil {
		e.t.Fatal(err)
	}
	if l := out.Lease; l.State != qm.Active || l.Node != idleNode {
		e.t.Fatalf("lease %s is %s on %q; want active on %s", l.ID, l.State, l.Node, idleNode)
	}
	return out.Lease
}

// report posts l40s-01's report sampled at `at` by the node's clock, every interval, with the
// lease's job on GPU 0 at util percent.
func (e *idleEnv) report(l *qm.Lease, at time.Time, interval time.Duration, util float64) {
	e.t.Helper()
	e.reportSent(l, at, interval, util, time.Time{})
}

// reportSent is report with the node's clock when it sends the report, as the agent's outbox
// says it (report.SentAtHeader); none when sentAt is zero (an older agent).
func (e *idleEnv) reportSent(l *qm.Lease, at time.Time, interval time.Duration, util float64, sentAt time.Time) {
	e.t.Helper()
	e.seq++
	topo := topology()
	r := report.Report{Version: report.Version, Node: idleNode, At: at, Seq: e.seq, Interval: interval.Seconds(), TopologyHash: topo.Hash(), Topology: topo,
		GPUs: []report.GPU{
			{Index: 0, UUID: "GPU-0", Util: f(util), MemUsed: 4 << 30, Processes: []report.Process{{PID: 7, Job: fmt.Sprint(9000 + int(l.ID)), MemUsed: 4 << 30}}},
			{Index: 1, UUID: "GPU-1", Util: f(0)},
		}}
	b, err := json.Marshal(r)
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+report.Path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+e.token)
	if !sentAt.IsZero() {
		req.Header.Set(report.SentAtHeader, sentAt.Format(time.RFC3339Nano))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("report at %s: status %d", at, resp.StatusCode)
	}
}

func (e *idleEnv) tick() {
	e.t.Helper()
	if err := e.svc.Tick(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func (e *idleEnv) lease(id qm.LeaseID) *qm.Lease {
	e.t.Helper()
	l, err := e.svc.Get(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// An agent may report as seldom as every 10 minutes (--interval 10m). Its reports arrive a little
// after they were taken, so the last one is often more than 10 minutes old: that is its rhythm,
// not missing telemetry. A lease on such a node is not flagged as without telemetry, and it is
// flagged once the agent has missed a few reports.
func TestLongIntervalIsNotMissingTelemetry(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newIdleEnv(t, url)
		l := e.start()
		const interval = 10 * time.Minute
		for k := 0; k < 12; k++ { // two hours; each report arrives 20 s after it was taken
			e.report(l, e.clock.Now().Add(-20*time.Second), interval, 80)
			for range 20 {
				e.clock.Advance(30 * time.Second)
				e.tick()
			}
		}
		if n := e.notes.Of(qm.NoticeTelemetryMissing, l.ID); len(n) != 0 {
			t.Errorf("a lease on a node reporting every 10 minutes was flagged without telemetry %d times", len(n))
		}
		if got := e.lease(l.ID); got.State != qm.Active || got.Reason == "no telemetry" {
			t.Errorf("the lease is %s (%s); want active and observed", got.State, got.Reason)
		}
		// The agent stops: after a few missed reports the platform channel hears of it, once.
		for range 120 {
			e.clock.Advance(30 * time.Second)
			e.tick()
		}
		if n := e.notes.Of(qm.NoticeTelemetryMissing, l.ID); len(n) != 1 {
			t.Errorf("an agent silent for an hour: %d notices to the platform channel, want 1", len(n))
		}
	})
}

// A node whose clock runs 5 minutes behind the service's: its agent says its own time when it
// sends each report, so the service places the samples on its own clock. A user who answers the
// idle warning by running something for a few minutes makes the lease busy again; it is not
// reclaimed as if that work had happened before the warning. The idle period is measured on the
// service's clock too.
func TestActivityAfterAWarningFromANodeWhoseClockIsBehind(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newIdleEnv(t, url)
		l := e.start()
		node := func() time.Time { return e.clock.Now().Add(-5 * time.Minute) }
		send := func(util float64) {
			e.reportSent(l, node(), time.Minute, util, node())
			e.tick()
			e.clock.Advance(time.Minute)
		}
		for e.lease(l.ID).State == qm.Active && e.clock.Now().Before(t0.Add(time.Hour)) {
			send(0)
		}
		warned := e.lease(l.ID)
		if warned.State != qm.IdleWarned {
			t.Fatalf("an idle lease is %s after an hour; want warned", warned.State)
		}
		if idle := warned.WarnedAt.Sub(l.StartedAt); idle > 31*time.Minute {
			t.Errorf("warned after %s idle by the service's clock; want the class's 30m", idle)
		}
		// The owner reads the warning and runs a cell for 3 minutes, then reads its output for 20.
		for range 3 {
			send(80)
		}
		for range 20 {
			send(0)
		}
		got := e.lease(l.ID)
		if n := e.notes.Of(qm.NoticeReclaimed, l.ID); got.State != qm.Active || len(n) != 0 {
			t.Errorf("a lease busy for 3 minutes right after its warning is %s (%s), %d reclaim notices; want active again", got.State, got.Reason, len(n))
		}
	})
}

// A node whose clock runs ahead cannot make a lease look busy later than now: its samples are
// placed on the service's clock, and without the agent's sending time (an older agent) they are
// never placed after the moment the report arrived.
func TestANodeClockAheadIsNotActivityInTheFuture(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newIdleEnv(t, url)
		l := e.start()
		tel := ingest.Telemetry{Store: e.db}
		ahead := e.clock.Now().Add(90 * time.Second)
		e.reportSent(l, ahead, 10*time.Second, 80, ahead)
		if a, _ := tel.Activity(t.Context(), l); !a.LastActive.Equal(e.clock.Now()) || !a.Seen.Equal(e.clock.Now()) {
			t.Errorf("a report taken and sent 90 s ahead of the service's clock: %+v; want seen and active now (%s)", a, e.clock.Now())
		}
		e.clock.Advance(10 * time.Second)
		e.report(l, e.clock.Now().Add(90*time.Second), 10*time.Second, 80)
		if a, _ := tel.Activity(t.Context(), l); a.LastActive.After(e.clock.Now()) || a.Seen.After(e.clock.Now()) {
			t.Errorf("a report dated 90 s ahead without its sending time: %+v; want nothing after now (%s)", a, e.clock.Now())
		}
	})
}
