//go:build cgo

package ingest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/qm/qmtest"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/slurm"
	"github.com/acme/quartermaster/internal/slurm/slurmtest"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// sleeper is a workspace template that only sleeps: the real templates' servers are not installed
// on the test node.
const sleeper = `name: sleeper
version: 1
title: Sleeper
description: An interactive workspace that only sleeps, for tests.
tags: [test]
kind: interactive
resources: {gpus: 1, max_gpus: 8, cpus_per_gpu: 1, memory_gib_per_gpu: 1}
connect: {protocol: ssh, port: 2222}
example: ""
parameters: []
run: |
  exec sleep 600
`

// mutableScript is the fake GPUs' script, changed by the test as it goes.
type mutableScript struct {
	mu sync.Mutex
	s  agent.Script
}

func (m *mutableScript) Script() agent.Script { m.mu.Lock(); defer m.mu.Unlock(); return m.s }

func (m *mutableScript) set(t *testing.T, text string) {
	s, err := agent.ParseScript(text)
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	m.s = s
	m.mu.Unlock()
}

// slurmEnv is the whole path on the real test cluster: the lease service on Slurm with a policy
// whose interactive class idles out after 1 minute with 1 minute of grace, a node agent on a fake
// DGX A100 (in process, its clock the service's simulated one) whose processes' cgroups name the
// leases' Slurm jobs, reporting over HTTP to the real ingest handler, which is the service's
// telemetry.
type slurmEnv struct {
	t       *testing.T
	conf    string
	svc     *qm.Service
	backend *slurm.Backend
	clock   *sim.Clock
	notes   *qmtest.NoticeLog
	ing     *ingest.Ingest
	agent   *agent.Agent
	script  *mutableScript
	proc    string // the agent's fixture /proc
}

func newSlurmEnv(t *testing.T) *slurmEnv {
	conf := slurmtest.Cluster(t)
	p, err := policy.LoadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Backend = "slurm"
	p.Reports.Showback.PlatformChannel = "#gpu-platform"
	c, _ := p.Class("interactive")
	c.IdleTimeout, c.IdleGrace = policy.Duration{Duration: time.Minute}, policy.Duration{Duration: time.Minute}
	root := t.TempDir()
	for _, team := range p.Teams {
		team.Storage.Path = filepath.Join(root, team.Name)
		if err := os.MkdirAll(team.Storage.Path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m := fstest.MapFS{"sleeper.yaml": &fstest.MapFile{Data: []byte(sleeper)}}
	err = fs.WalkDir(qmtemplates.FS, "layouts", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(qmtemplates.FS, path)
		m[path] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := templates.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	backend, err := slurm.New(slurm.Config{Policy: p, Catalog: cat, Instance: "qmi" + hex.EncodeToString(b),
		Workload: workload.Settings{DefaultTemplate: "sleeper"}, Env: []string{"SLURM_CONF=" + conf}, Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.Open(t, storetest.SQLite(t))
	e := &slurmEnv{t: t, conf: conf, backend: backend, clock: sim.NewClock(time.Now().UTC().Truncate(time.Second)),
		notes: &qmtest.NoticeLog{}, script: &mutableScript{}, proc: t.TempDir()}
	e.svc = &qm.Service{Policy: p, Store: db, Backend: backend, Clock: e.clock, Directory: p, Notifier: e.notes,
		Telemetry: ingest.Telemetry{Store: db}, Logger: storetest.Logger(t)}
	t.Cleanup(func() {
		jobs, _ := backend.Jobs(context.Background())
		for _, j := range jobs {
			if !j.State.Ended() {
				_ = backend.Cancel(context.Background(), j)
			}
		}
	})

	// The running leases are read again for every report (IndexEvery): the index is kept for
	// IndexEvery of real time, while the test's clock moves 10 s a step, so a lease started a few
	// real seconds after the last read went unseen for minutes of the test's time, and was told to
	// the platform channel as without telemetry before a single report had missed it.
	e.ing = ingest.New(ingest.Config{Store: db, Clock: e.clock, IdleBelow: p.Idle.UtilizationBelow, Logger: storetest.Logger(t), IndexEvery: time.Nanosecond,
		Leases: func(ctx context.Context) ([]*qm.Lease, error) {
			return e.svc.List(ctx, qm.LeaseFilter{States: []qm.State{qm.Provisioning, qm.Active, qm.IdleWarned}})
		}})
	mux := http.NewServeMux()
	e.ing.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	node := e.slurm("sinfo", "-h", "-N", "-o", "%N")
	node = strings.TrimSpace(strings.Split(node, "\n")[0])
	token, err := ingest.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateAgentToken(t.Context(), node, ingest.HashToken(token), e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	fake, err := nvml.NewFake("dgxa100", node, e.script)
	if err != nil {
		t.Fatal(err)
	}
	devs, err := nvml.OpenFake(fake, storetest.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = devs.Close() })
	e.agent, err = agent.New(agent.Config{Node: node, Devices: devs, Cgroups: agent.Cgroups{ProcRoot: e.proc},
		Interval: 10 * time.Second, Now: e.clock.Now, Service: srv.URL, Token: token, Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *slurmEnv) slurm(args ...string) string {
	e.t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+e.conf)
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// start requests a lease and waits (in real time) for its Slurm job to run; the process pid of the
// fake GPUs then belongs to the job, as slurmstepd's cgroup (v2) would say.
func (e *slurmEnv) start(user string, pid int) *qm.Lease {
	e.t.Helper()
	out, err := e.svc.Request(context.Background(), qm.LeaseRequest{User: user, GPUs: 1, Class: "interactive", Duration: 2 * time.Hour})
	if err != nil {
		e.t.Fatal(err)
	}
	var l *qm.Lease
	deadline := time.Now().Add(90 * time.Second)
	for {
		if _, err := e.svc.Reconcile(context.Background()); err != nil {
			e.t.Log(err)
		}
		if l, err = e.svc.Get(context.Background(), out.Lease.ID); err != nil {
			e.t.Fatal(err)
		}
		if l.State == qm.Active && l.Ref != "" {
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s is %s after 90 s", l.ID, l.State)
		}
		time.Sleep(100 * time.Millisecond)
	}
	dir := filepath.Join(e.proc, fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	cg := fmt.Sprintf("0::/system.slice/slurmstepd.scope/job_%s/step_0/user/task_0\n", l.Ref)
	if err := os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cg), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return l
}

// step moves the clock 10 s; the agent reports (when it runs) and the service ticks.
func (e *slurmEnv) step(agentRuns bool) {
	e.t.Helper()
	e.clock.Advance(10 * time.Second)
	if agentRuns {
		if _, err := e.agent.Send(context.Background()); err != nil {
			e.t.Fatal(err)
		}
		if err := e.agent.Outbox().Flush(context.Background()); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := e.svc.Tick(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func (e *slurmEnv) lease(id qm.LeaseID) *qm.Lease {
	l, err := e.svc.Get(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// TestIdleReclaimOnSlurm: a Slurm workspace whose GPU sits idle (its job's process on GPU 0 at 0 %
// with memory that does not change) is warned after idle_timeout; Keep keeps it for another
// idle_timeout; with no answer it is reclaimed after idle_grace: its job is cancelled and the
// reclaimed GPU-hours are counted. A busy workspace is never warned; when the agent stops,
// nothing is reclaimed and the platform channel hears of it once.
func TestIdleReclaimOnSlurm(t *testing.T) {
	e := newSlurmEnv(t)
	ctx := context.Background()
	const alice = "alice@acme.example"
	l := e.start(alice, 4242)
	started := e.lease(l.ID).StartedAt
	e.script.set(t, "0 0 mem=4096 pids=4242; * 0")

	elapsed := func() time.Duration { return e.clock.Now().Sub(started) }
	for elapsed() < 50*time.Second {
		e.step(true)
	}
	if got := e.lease(l.ID); got.State != qm.Active || len(e.notes.Of(qm.NoticeIdleWarning, l.ID)) != 0 {
		t.Fatalf("after %s idle: %s, %d warnings; want active, not yet warned", elapsed(), got.State, len(e.notes.Of(qm.NoticeIdleWarning, l.ID)))
	}
	e.step(true)
	if got := e.lease(l.ID); got.State != qm.IdleWarned || len(e.notes.Of(qm.NoticeIdleWarning, l.ID)) != 1 {
		t.Fatalf("after %s idle (idle_timeout 1m): %s with %d warnings; want idle_warned, warned once", elapsed(), got.State, len(e.notes.Of(qm.NoticeIdleWarning, l.ID)))
	}

	// Keep: another full idle period before the next warning.
	if _, err := e.svc.Keep(ctx, alice, l.ID); err != nil {
		t.Fatal(err)
	}
	kept := e.clock.Now()
	for e.clock.Now().Sub(kept) < 50*time.Second {
		e.step(true)
	}
	if got := e.lease(l.ID); got.State != qm.Active {
		t.Fatalf("%s after Keep: %s; want active for another minute", e.clock.Now().Sub(kept), got.State)
	}
	e.step(true)
	if got := e.lease(l.ID); got.State != qm.IdleWarned || len(e.notes.Of(qm.NoticeIdleWarning, l.ID)) != 2 {
		t.Fatalf("a minute after Keep: %s, %d warnings; want warned again", got.State, len(e.notes.Of(qm.NoticeIdleWarning, l.ID)))
	}

	// No answer: reclaimed after idle_grace.
	warned := e.clock.Now()
	for e.clock.Now().Sub(warned) < 50*time.Second {
		e.step(true)
	}
	if got := e.lease(l.ID); got.State != qm.IdleWarned {
		t.Fatalf("%s into the grace: %s", e.clock.Now().Sub(warned), got.State)
	}
	e.step(true)
	got := e.lease(l.ID)
	if got.State != qm.Reclaimed || len(e.notes.Of(qm.NoticeReclaimed, l.ID)) != 1 {
		t.Fatalf("after idle_grace with no answer: %s, %d reclaim notices", got.State, len(e.notes.Of(qm.NoticeReclaimed, l.ID)))
	}
	wantHours := got.ExpiresAt.Sub(got.EndedAt).Hours()
	if math.Abs(got.Reclaimed-wantHours) > 1e-6 || got.Reclaimed < 1.9 {
		t.Errorf("reclaimed %.3f GPU-hours, want the %.3f left of the lease", got.Reclaimed, wantHours)
	}
	state := ""
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		state = strings.TrimSpace(e.slurm("squeue", "-h", "-j", got.Ref, "-o", "%T"))
		if state == "" || state == "CANCELLED" {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if state != "" && state != "CANCELLED" {
		t.Fatalf("job %s of the reclaimed lease is %s in squeue", got.Ref, state)
	}
	if err := e.ing.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	use, err := e.svc.Store.(interface {
		Usage(context.Context, time.Time, time.Time) ([]qm.UsageRollup, error)
	}).Usage(ctx, started.Add(-time.Hour), e.clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var idle float64
	for _, u := range use {
		if u.Lease == l.ID {
			idle += u.IdleGPUSeconds
		}
	}
	if idle < 170 {
		t.Errorf("%.0f idle GPU-seconds rolled up for %s, want the 3 idle minutes", idle, l.ID)
	}

	// A busy workspace is never warned; with the agent stopped it is not reclaimed either, and
	// the platform channel is told once that it cannot be judged.
	const bob = "bob@acme.example"
	b := e.start(bob, 4343)
	e.script.set(t, "1 80 mem=8192 pids=4343; * 0")
	bStart := e.lease(b.ID).StartedAt
	for e.clock.Now().Sub(bStart) < 3*time.Minute {
		e.step(true)
	}
	if got := e.lease(b.ID); got.State != qm.Active || len(e.notes.Of(qm.NoticeIdleWarning, b.ID)) != 0 {
		t.Fatalf("a busy workspace after 3 minutes: %s, %d warnings", got.State, len(e.notes.Of(qm.NoticeIdleWarning, b.ID)))
	}
	for range 90 { // 15 minutes without the agent
		e.step(false)
	}
	got = e.lease(b.ID)
	if got.State != qm.Active {
		t.Fatalf("with the agent stopped for 15 minutes the lease is %s; want it left alone", got.State)
	}
	missing := e.notes.Of(qm.NoticeTelemetryMissing, b.ID)
	if len(missing) != 1 || len(missing[0].To) != 1 || missing[0].To[0] != "#gpu-platform" {
		t.Fatalf("the platform channel was told %d times (%+v); want once", len(missing), missing)
	}
	if j := strings.TrimSpace(e.slurm("squeue", "-h", "-j", got.Ref, "-o", "%T")); j != "RUNNING" {
		t.Errorf("job %s is %s; want it still running", got.Ref, j)
	}
}
