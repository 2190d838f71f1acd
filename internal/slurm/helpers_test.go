package slurm_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"github.com/acme/quartermaster/internal/qm/qmtest"
	"github.com/acme/quartermaster/internal/slurm/slurmtest"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/slurm"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// slurmCluster is the test cluster, held by this test alone until it ends.
func slurmCluster(t testing.TB) (conf string) {
	t.Helper()
	return slurmtest.Cluster(t)
}

// testTemplates are the embedded layouts with short test workloads instead of the real
// templates, whose servers and trainers are not installed on the test node: "sleeper", an
// interactive workspace that sleeps (the default for leases naming none), "nap", a batch job
// that sleeps for its seconds parameter and exits with its code parameter, "broken", a
// workspace whose server is missing, so it fails at once with exit code 127, and "probe", a
// batch job that writes its working directory, storage, mounted directory and note to probe.txt.
var testTemplates = map[string]string{
	"sleeper.yaml": `name: sleeper
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
`,
	"nap.yaml": `name: nap
version: 1
title: Nap
description: A batch job that sleeps, then exits with a code, for tests.
tags: [test]
kind: batch
resources: {gpus: 1, max_gpus: 8, cpus_per_gpu: 1, memory_gib_per_gpu: 1}
example: seconds=1
parameters:
  - name: seconds
    type: int
    default: "1"
    min: "0"
    max: "600"
    description: How long to sleep.
  - name: code
    type: int
    default: "0"
    min: "0"
    max: "255"
    description: Exit code.
run: |
  sleep {{.P.seconds}}
  exit {{.P.code}}
`,
	"broken.yaml": `name: broken
version: 1
title: Broken
description: A workspace whose server is not installed, for tests.
tags: [test]
kind: interactive
resources: {gpus: 1, max_gpus: 8, cpus_per_gpu: 1, memory_gib_per_gpu: 1}
connect: {protocol: ssh, port: 2222}
example: ""
parameters: []
run: |
  echo "starting the workspace on port $QM_PORT"
  exec /opt/qm-missing/sshd -D -p "$QM_PORT"
`,
	"probe.yaml": `name: probe
version: 1
title: Probe
description: A batch job that writes where it runs and what it was given, then sleeps, for tests.
tags: [test]
kind: batch
resources: {gpus: 1, max_gpus: 8, cpus_per_gpu: 1, memory_gib_per_gpu: 1}
example: dataset=in
parameters:
  - name: dataset
    type: path
    default: in
    description: A directory in the team storage.
  - name: note
    type: string
    default: none
    description: Free text.
mounts:
  - {parameter: dataset, at: /data, env: QM_IN}
run: |
  printf '%s\n' "$PWD" "$QM_DATA" "$QM_IN" {{shq .P.note}} > "$QM_JOB_DIR/probe.tmp"
  mv "$QM_JOB_DIR/probe.tmp" "$QM_JOB_DIR/probe.txt"
  sleep 60
`,
}

func testCatalog(t testing.TB) *templates.Catalog {
	t.Helper()
	return catalogWith(t, nil)
}

// catalogWith is the test catalog with more templates (file name to definition).
func catalogWith(t testing.TB, extra map[string]string) *templates.Catalog {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(qmtemplates.FS, "layouts", func(path string, d fs.DirEntry, err error) error {
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
	for name, body := range testTemplates {
		m[name] = &fstest.MapFile{Data: []byte(body)}
	}
	for name, body := range extra {
		m[name] = &fstest.MapFile{Data: []byte(body)}
	}
	cat, err := templates.Load(m)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// examplePolicy is docs/quartermaster.example.yaml with backend slurm and the teams' storage in
// a temporary directory.
func examplePolicy(t testing.TB) *policy.Policy {
	t.Helper()
	p, err := policy.LoadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return onSlurm(t, p)
}

// onSlurm is p with backend slurm and its teams' storage in a temporary directory.
func onSlurm(t testing.TB, p *policy.Policy) *policy.Policy {
	t.Helper()
	p.Backend = "slurm"
	root := t.TempDir()
	for _, team := range p.Teams {
		team.Storage.Path = filepath.Join(root, team.Name)
		if err := os.MkdirAll(team.Storage.Path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// env is a lease service on the test cluster: the example policy, SQLite, a simulated clock that
// starts now, and a Slurm backend whose comments carry an instance name of its own, so tests
// running at once (and other packages' jobs) never see each other's jobs.
type env struct {
	t       testing.TB
	conf    string
	svc     *qm.Service
	backend *slurm.Backend
	clock   *sim.Clock
	notes   *qmtest.NoticeLog
	inst    string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	// What needs no cluster is made before the test waits for the cluster to itself.
	return newEnvOn(t, examplePolicy(t))
}

// newEnvOn is newEnv on policy p (backend slurm, its teams' storage made).
func newEnvOn(t testing.TB, p *policy.Policy) *env {
	t.Helper()
	cat := testCatalog(t)
	st := storetest.Open(t, storetest.SQLite(t))
	conf := slurmCluster(t)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	inst := "qmt" + hex.EncodeToString(b)
	backend, err := slurm.New(slurm.Config{Policy: p, Catalog: cat, Instance: inst,
		Workload: workload.Settings{DefaultTemplate: "sleeper"},
		Env:      []string{"SLURM_CONF=" + conf}, Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, conf: conf, backend: backend, clock: sim.NewClock(time.Now().UTC()), notes: &qmtest.NoticeLog{}, inst: inst}
	e.svc = &qm.Service{Policy: p, Store: st, Backend: backend, Clock: e.clock,
		Directory: p, Notifier: e.notes, Logger: storetest.Logger(t)}
	t.Cleanup(e.cancelAll)
	return e
}

// cancelAll cancels every job of this test's instance that is still there.
func (e *env) cancelAll() {
	jobs, err := e.backend.Jobs(context.Background())
	if err != nil {
		e.t.Logf("cleanup: %v", err)
		return
	}
	for _, j := range jobs {
		if !j.State.Ended() {
			_ = e.backend.Cancel(context.Background(), j)
		}
	}
}

// slurmCmd runs a Slurm command against the test cluster.
func (e *env) slurmCmd(args ...string) string {
	e.t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+e.conf)
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// job reads one job back from squeue --json. A read that fails is tried again for a few
// seconds: on a loaded machine slurmctld now and then drops a client's connection (squeue then
// dies of a broken pipe), which says nothing about the job.
func (e *env) job(ref string) slurm.SqueueJob {
	e.t.Helper()
	var out []byte
	for try := 0; ; try++ {
		cmd := exec.Command("squeue", "--json")
		cmd.Env = append(os.Environ(), "SLURM_CONF="+e.conf)
		var err error
		if out, err = cmd.Output(); err == nil {
			break
		}
		if try == 10 {
			e.t.Fatalf("squeue --json: %v\n%s", err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	all, err := slurm.ParseSqueue(out)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, j := range all {
		if j.JobID == ref {
			return j
		}
	}
	e.t.Fatalf("job %s is not in squeue --json", ref)
	return slurm.SqueueJob{}
}

// waitJob polls squeue every 100 ms until job ref is in one of states, or fails at the deadline.
func (e *env) waitJob(ref string, states ...string) slurm.SqueueJob {
	e.t.Helper()
	var j slurm.SqueueJob
	e.eventually("job "+ref+" to be "+strings.Join(states, " or "), func() bool {
		j = e.job(ref)
		for _, s := range states {
			if j.State == s {
				return true
			}
		}
		return false
	})
	return j
}

// beginRequeued sets the begin time of job ref, requeued at or after since, to begin ("now",
// "now+75"), as an administrator would, once Slurm is done with the requeue. Slurm sets a
// requeued job's begin time, about two minutes on, only when its old run has ended (the job is
// PENDING again, not COMPLETING): a begin time set before is overwritten. And slurmd refuses to
// run a job whose credential is dated the second its old run's was revoked ("Job credential
// revoked": the job fails), so the new begin time is a second after that at the earliest.
func (e *env) beginRequeued(ref string, since time.Time, begin string) {
	e.t.Helper()
	e.eventually("job "+ref+" to be pending again, its requeue done", func() bool {
		j := e.job(ref)
		return j.State == "PENDING" && j.EligibleTime.After(since)
	})
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	e.slurmCmd("scontrol", "update", "JobId="+ref, "StartTime="+begin)
}

// waitLease runs the service's loops every 100 ms, as serve does (the reconcile pass, which
// refreshes the inventory, then the tick, which starts queued leases that now fit), until the
// lease is in state, or fails.
func (e *env) waitLease(id qm.LeaseID, state qm.State) *qm.Lease {
	e.t.Helper()
	var l *qm.Lease
	e.eventually(id.String()+" to be "+string(state), func() bool {
		if _, err := e.svc.Reconcile(context.Background()); err != nil {
			e.t.Logf("reconcile: %v", err)
		}
		if err := e.svc.Tick(context.Background()); err != nil {
			e.t.Logf("tick: %v", err)
		}
		var err error
		if l, err = e.svc.Get(context.Background(), id); err != nil {
			e.t.Fatal(err)
		}
		return l.State == state
	})
	return l
}

// deadline bounds every wait: long enough for a loaded two-core machine whose cluster other
// packages' tests use at the same time, and never a measure of speed.
const deadline = 90 * time.Second

func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			e.t.Fatalf("gave up after %s waiting for %s", deadline, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *env) request(user string, gpus int, class string, d time.Duration, tmpl string, params map[string]string) *qm.Outcome {
	e.t.Helper()
	out, err := e.svc.Request(context.Background(), qm.LeaseRequest{User: user, GPUs: gpus, Class: class, Duration: d, Template: tmpl, Params: params})
	if err != nil {
		e.t.Fatalf("request %d %s: %v", gpus, class, err)
	}
	return out
}

// nodeName is the test cluster's one node: this host's short name, as slurm-up.sh names it.
func (e *env) nodeName() string {
	e.t.Helper()
	host, err := os.Hostname()
	if err != nil {
		e.t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	return host
}
