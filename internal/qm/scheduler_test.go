package qm_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm/qmtest"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// fakeScheduler is a backend whose scheduler places leases itself (Inventory nil): each Start
// makes a job the test then moves through its states.
type fakeScheduler struct {
	mu         sync.Mutex
	next       int
	startAs    qm.Started // what Start reports (Ref is filled in)
	starts     int
	started    []qm.Lease // each lease Start was given, as it was given
	stopped    []string
	jobs       []qm.Job
	cancels    []string
	retimes    map[string]time.Duration
	retimeErr  error  // what SetTimeLimit answers, when not nil (a scheduler that refuses)
	startErr   error  // what Start answers, when not nil (a scheduler that refuses the job)
	duringJobs func() // runs inside Jobs, before it answers
	// nodes is what the scheduler reports of its nodes; inv what the last refresh read (nil
	// before the first, as a real backend's inventory).
	nodes      []qm.Node
	inv        []qm.Node
	refreshes  int
	refreshErr error // what RefreshInventory answers, when not nil (a scheduler that does not answer)
}

func (f *fakeScheduler) Inventory() []qm.Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.inv
}

func (f *fakeScheduler) RefreshInventory(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refreshes++
	if f.refreshErr != nil {
		return f.refreshErr
	}
	f.inv = append([]qm.Node(nil), f.nodes...)
	return nil
}

func (f *fakeScheduler) Start(_ context.Context, l *qm.Lease) (qm.Started, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	f.starts++
	f.started = append(f.started, *l)
	if f.startErr != nil {
		return qm.Started{}, f.startErr
	}
	st := f.startAs
	st.Ref = fmt.Sprint(100 + f.next)
	if l.Node != "" && st.State == qm.Active {
		st.Node = l.Node // where the service placed it
	}
	state := qm.JobPending
	if st.State == qm.Active {
		state = qm.JobRunning
	}
	f.jobs = append(f.jobs, qm.Job{Lease: l.ID, Ref: st.Ref, State: state, Node: st.Node})
	return st, nil
}

func (f *fakeScheduler) Stop(_ context.Context, l *qm.Lease) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = append(f.stopped, l.Ref)
	f.set(l.Ref, qm.JobCancelled, "")
	return nil
}

func (f *fakeScheduler) Jobs(context.Context) ([]qm.Job, error) {
	if f.duringJobs != nil {
		f.duringJobs()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]qm.Job(nil), f.jobs...), nil
}

func (f *fakeScheduler) Cancel(_ context.Context, j qm.Job) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancels = append(f.cancels, j.Ref)
	f.set(j.Ref, qm.JobCancelled, "")
	return nil
}

func (f *fakeScheduler) SetTimeLimit(_ context.Context, j qm.Job, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.retimeErr != nil {
		return f.retimeErr
	}
	if f.retimes == nil {
		f.retimes = map[string]time.Duration{}
	}
	f.retimes[j.Ref] = d
	for i := range f.jobs {
		if f.jobs[i].Ref == j.Ref {
			f.jobs[i].TimeLimit = d
		}
	}
	return nil
}

// set moves a job to a state; the caller holds mu.
func (f *fakeScheduler) set(ref string, s qm.JobState, reason string) {
	for i := range f.jobs {
		if f.jobs[i].Ref == ref {
			f.jobs[i].State, f.jobs[i].Reason = s, reason
			if s == qm.JobRunning && f.jobs[i].Node == "" {
				f.jobs[i].Node = "gpu07"
			}
		}
	}
}

func (f *fakeScheduler) Set(ref string, s qm.JobState, reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.set(ref, s, reason)
}

func (f *fakeScheduler) Add(j qm.Job) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jobs = append(f.jobs, j)
}

func (f *fakeScheduler) Remove(ref string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.jobs {
		if f.jobs[i].Ref == ref {
			f.jobs = append(f.jobs[:i], f.jobs[i+1:]...)
			return
		}
	}
}

func schedService(t *testing.T, startAs qm.Started) (*qm.Service, *fakeScheduler, *sim.Clock, *qmtest.NoticeLog) {
	t.Helper()
	p, err := policy.LoadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeScheduler{startAs: startAs}
	clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
	notes := &qmtest.NoticeLog{}
	svc := &qm.Service{Policy: p, Store: storetest.Open(t, storetest.SQLite(t)), Clock: clock, Backend: f,
		Directory: p, Notifier: notes, Logger: storetest.Logger(t)}
	return svc, f, clock, notes
}

func mustRequest(t *testing.T, svc *qm.Service, user string, gpus int, class string) *qm.Lease {
	t.Helper()
	out, err := svc.Request(context.Background(), qm.LeaseRequest{User: user, GPUs: gpus, Class: class, Duration: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return out.Lease
}

func mustGet(t *testing.T, svc *qm.Service, id qm.LeaseID) *qm.Lease {
	t.Helper()
	l, err := svc.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSchedulerQueues: a lease the scheduler holds in its queue is queued, with the scheduler's
// reason, and the service's ticks never submit it again.
func TestSchedulerQueues(t *testing.T) {
	svc, f, _, _ := schedService(t, qm.Started{State: qm.Queued, Connect: "ssh alice@" + qm.NodePlaceholder, Reason: "Slurm: Resources"})
	ctx := context.Background()
	l := mustRequest(t, svc, "alice@acme.example", 1, "interactive")
	if l.State != qm.Queued || l.Ref != "101" || !strings.Contains(l.Reason, "Resources") {
		t.Fatalf("lease %s: %s, ref %q, reason %q", l.ID, l.State, l.Ref, l.Reason)
	}
	ev, err := svc.History(ctx, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	var trail []string
	for _, e := range ev {
		trail = append(trail, string(e.To))
	}
	if got := strings.Join(trail, ","); got != "queued,provisioning,queued" {
		t.Errorf("audit trail %s", got)
	}
	for range 3 {
		if err := svc.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if f.starts != 1 {
		t.Fatalf("the lease was submitted %d times", f.starts)
	}
	// Cancelling it while it waits stops its job.
	if _, err := svc.Release(ctx, "alice@acme.example", l.ID); err != nil {
		t.Fatal(err)
	}
	if len(f.stopped) != 1 || f.stopped[0] != "101" {
		t.Errorf("stopped %v", f.stopped)
	}
}

// TestReconcileFollowsJobs: each job state moves its lease where it belongs and tells the owner.
func TestReconcileFollowsJobs(t *testing.T) {
	svc, f, _, notes := schedService(t, qm.Started{State: qm.Queued, Connect: "ssh -p 2222 alice@" + qm.NodePlaceholder})
	ctx := context.Background()
	type row struct {
		job    qm.JobState
		reason string
		want   qm.State
		notice qm.NoticeKind
		why    string
	}
	rows := []row{
		{qm.JobPending, "Slurm: Priority", qm.Queued, "", ""},
		{qm.JobRunning, "", qm.Active, qm.NoticeGranted, "workspace ready"},
		{qm.JobEnding, "", qm.Queued, "", ""},
		{qm.JobCompleted, "exit code 0", qm.Released, qm.NoticeFinished, "its job finished (exit code 0)"},
		{qm.JobTimeout, "", qm.Expired, qm.NoticeExpired, "time limit"},
		{qm.JobTimeout, "its deadline passed (Slurm: DEADLINE)", qm.Expired, qm.NoticeExpired, "its job ended: its deadline passed (Slurm: DEADLINE)"},
		{qm.JobCancelled, "", qm.Failed, qm.NoticeFailed, "cancelled in the scheduler, outside Quartermaster"},
		{qm.JobFailed, "its node failed (NODE_FAIL)", qm.Failed, qm.NoticeFailed, "its job failed: its node failed (NODE_FAIL)"},
	}
	leases := make([]*qm.Lease, len(rows))
	for i, r := range rows {
		leases[i] = mustRequest(t, svc, "alice@acme.example", 1, "train")
		f.Set(leases[i].Ref, r.job, r.reason)
	}
	rep, err := svc.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Leases != len(rows) || rep.Activated != 1 || rep.Ended != 5 || rep.Cancelled != 0 || rep.Vanished != 0 {
		t.Errorf("report %v", rep)
	}
	for i, r := range rows {
		l := mustGet(t, svc, leases[i].ID)
		if l.State != r.want || (r.why != "" && !strings.Contains(l.Reason, r.why)) {
			t.Errorf("job %s: lease %s is %s (%q), want %s (%q)", r.job, l.ID, l.State, l.Reason, r.want, r.why)
		}
		got := notes.Kinds(l.ID)
		if (r.notice == "" && len(got) != 0) || (r.notice != "" && (len(got) != 1 || got[0] != r.notice)) {
			t.Errorf("job %s: notices %v, want %q", r.job, got, r.notice)
		}
		if r.job == qm.JobRunning && (l.Node != "gpu07" || l.Connect != "ssh -p 2222 alice@gpu07" || l.StartedAt.IsZero() || l.ExpiresAt.IsZero()) {
			t.Errorf("running lease %+v", l)
		}
	}
	// A second pass changes nothing and tells nobody anything new.
	before := notes.Len()
	if rep, err := svc.Reconcile(ctx); err != nil || rep.Activated+rep.Ended+rep.Vanished+rep.Cancelled != 0 {
		t.Errorf("second pass: %v, %v", rep, err)
	}
	if notes.Len() != before {
		t.Errorf("second pass sent %d notices", notes.Len()-before)
	}
}

// TestReconcileHeals covers what a crash or a person leaves behind.
func TestReconcileHeals(t *testing.T) {
	svc, f, clock, notes := schedService(t, qm.Started{State: qm.Active, Node: "gpu01"})
	ctx := context.Background()

	vanished := mustRequest(t, svc, "alice@acme.example", 1, "train")
	f.Remove(vanished.Ref)

	released := mustRequest(t, svc, "alice@acme.example", 1, "train")
	if _, err := svc.Release(ctx, "alice@acme.example", released.ID); err != nil {
		t.Fatal(err)
	}
	f.Set(released.Ref, qm.JobRunning, "") // its scancel was lost

	dup := mustRequest(t, svc, "alice@acme.example", 1, "train")
	f.Add(qm.Job{Lease: dup.ID, Ref: "900", State: qm.JobRunning, Node: "gpu02"}) // a second submission

	f.Add(qm.Job{Lease: 4242, Ref: "901", State: qm.JobRunning}) // its lease never committed
	f.Add(qm.Job{Lease: 4243, Ref: "902", State: qm.JobCompleted})

	// Crashed between committing the lease and submitting its job, or between submitting and
	// recording it.
	unsent := storeLease(t, svc, qm.Provisioning)
	unrecorded := storeLease(t, svc, qm.Provisioning)
	f.Add(qm.Job{Lease: unrecorded.ID, Ref: "903", State: qm.JobRunning, Node: "gpu03"})

	// An extension the scheduler has not heard of.
	extended := mustRequest(t, svc, "alice@acme.example", 1, "train")
	f.mu.Lock()
	for i := range f.jobs {
		if f.jobs[i].Ref == extended.Ref {
			f.jobs[i].TimeLimit = time.Hour
		}
	}
	f.mu.Unlock()

	rep, err := svc.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Vanished != 1 || rep.Cancelled != 3 || rep.Adopted != 1 || rep.Activated != 1 || rep.Retimed != 1 {
		t.Errorf("report %v", rep)
	}
	if l := mustGet(t, svc, vanished.ID); l.State != qm.Failed || !strings.Contains(l.Reason, "gone from the scheduler") {
		t.Errorf("vanished: %s %q", l.State, l.Reason)
	}
	if k := notes.Kinds(vanished.ID); len(k) == 0 || k[len(k)-1] != qm.NoticeFailed {
		t.Errorf("vanished lease's owner was told %v", k)
	}
	if strings.Join(f.cancels, ",") != released.Ref+",900,901" {
		t.Errorf("cancelled %v, want the released lease's job, the duplicate and the orphan", f.cancels)
	}
	if l := mustGet(t, svc, unsent.ID); l.State != qm.Provisioning {
		t.Errorf("a lease whose start may be in flight became %s", l.State)
	}
	if l := mustGet(t, svc, unrecorded.ID); l.State != qm.Active || l.Ref != "903" || l.Node != "gpu03" {
		t.Errorf("unrecorded: %s ref %q node %q", l.State, l.Ref, l.Node)
	}
	if got := f.retimes[extended.Ref]; got != 2*time.Hour {
		t.Errorf("time limit raised to %s, want 2h", got)
	}

	// After the grace its job is submitted again, once, and its owner told when it runs.
	clock.Advance(qm.SubmitGrace + time.Second)
	rep, err = svc.Reconcile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Resubmitted != 1 || rep.Vanished != 0 {
		t.Errorf("after the grace: report %v, want the unsent lease's job submitted again", rep)
	}
	if l := mustGet(t, svc, unsent.ID); l.State != qm.Active || l.Ref == "" {
		t.Errorf("unsent after the grace: %s ref %q %q, want active with its job", l.State, l.Ref, l.Reason)
	}
	if k := notes.Kinds(unsent.ID); len(k) == 0 || k[len(k)-1] != qm.NoticeGranted {
		t.Errorf("the owner of the lease submitted again was told %v", k)
	}
	if rep, err := svc.Reconcile(ctx); err != nil || rep.Resubmitted != 0 {
		t.Errorf("a second pass: %v %v; the job was submitted again twice", rep, err)
	}
}

// TestReconcileRace: a lease created and submitted while a pass runs (after it read the leases,
// before it read the jobs) is not taken for an orphan.
func TestReconcileRace(t *testing.T) {
	svc, f, _, _ := schedService(t, qm.Started{State: qm.Active, Node: "gpu01"})
	var late *qm.Lease
	f.duringJobs = func() {
		if late == nil {
			late = mustRequest(t, svc, "alice@acme.example", 1, "train")
		}
	}
	rep, err := svc.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Cancelled != 0 || len(f.cancels) != 0 {
		t.Fatalf("a lease created during the pass had its job cancelled: %v", rep)
	}
	if l := mustGet(t, svc, late.ID); l.State != qm.Active {
		t.Errorf("late lease is %s", l.State)
	}
}

// TestReconcileWithoutWatcher: backends that place leases themselves (sim) have nothing to reconcile.
func TestReconcileWithoutWatcher(t *testing.T) {
	p, err := policy.LoadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
	svc := &qm.Service{Policy: p, Store: storetest.Open(t, storetest.SQLite(t)), Clock: clock, Backend: sim.New(p, clock), Directory: p}
	mustRequest(t, svc, "alice@acme.example", 1, "train")
	if rep, err := svc.Reconcile(context.Background()); err != nil || rep != (qm.ReconcileReport{}) {
		t.Errorf("reconcile on sim: %v, %v", rep, err)
	}
}

func storeLease(t *testing.T, svc *qm.Service, state qm.State) *qm.Lease {
	t.Helper()
	ctx := context.Background()
	now := svc.Clock.Now()
	l := &qm.Lease{User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 1, Duration: time.Hour, State: state, CreatedAt: now, DataClass: "public"}
	err := svc.Store.Update(ctx, nil, func(tx qm.Tx) error {
		if err := tx.CreateLease(ctx, l); err != nil {
			return err
		}
		return tx.AddEvent(ctx, &qm.Event{Lease: l.ID, At: now, Actor: qm.SystemActor, To: state})
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestARequeuedJobIsToldAndFollowed: a running workspace's job that the scheduler puts back in
// its queue (an administrator's requeue or hold, a preemption, a node failure) leaves its lease
// active with its end, tells the owner once that the workspace does not run, is not judged idle
// meanwhile, and when the job runs again, on another node, the owner is told the new address.
func TestARequeuedJobIsToldAndFollowed(t *testing.T) {
	svc, f, _, notes := schedService(t, qm.Started{State: qm.Queued, Connect: "ssh -p 2222 alice@" + qm.NodePlaceholder})
	ctx := context.Background()
	l := mustRequest(t, svc, "alice@acme.example", 1, "train")
	f.Set(l.Ref, qm.JobRunning, "")
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	ran := mustGet(t, svc, l.ID)
	if ran.State != qm.Active || ran.Connect != "ssh -p 2222 alice@gpu07" {
		t.Fatalf("running: %s %q", ran.State, ran.Connect)
	}
	f.Set(l.Ref, qm.JobPending, "Slurm: JobHeldAdmin")
	for range 2 {
		if _, err := svc.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
	}
	held := mustGet(t, svc, l.ID)
	if held.State != qm.Active || !qm.Requeued(held) || !strings.Contains(held.Reason, "JobHeldAdmin") || !held.ExpiresAt.Equal(ran.ExpiresAt) {
		t.Errorf("requeued: %s %q, ends %s (was %s)", held.State, held.Reason, held.ExpiresAt, ran.ExpiresAt)
	}
	if got := notes.Kinds(l.ID); len(got) != 2 || got[1] != qm.NoticeRequeued {
		t.Errorf("notices after the requeue, over two passes: %v; want granted, then requeued once", got)
	}
	f.mu.Lock()
	for i := range f.jobs {
		if f.jobs[i].Ref == l.Ref {
			f.jobs[i].State, f.jobs[i].Node, f.jobs[i].Reason = qm.JobRunning, "gpu12", ""
		}
	}
	f.mu.Unlock()
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	again := mustGet(t, svc, l.ID)
	if again.State != qm.Active || qm.Requeued(again) || again.Node != "gpu12" || again.Connect != "ssh -p 2222 alice@gpu12" {
		t.Errorf("running again: %s %q on %s, connect %q", again.State, again.Reason, again.Node, again.Connect)
	}
	if got := notes.Kinds(l.ID); len(got) != 3 || got[2] != qm.NoticeGranted {
		t.Errorf("notices once it runs again: %v; want granted, requeued, granted", got)
	}
}

// TestEndedJobsTheSchedulerKeepsAreDeletedADayLater: a scheduler that keeps an ended job's
// objects (Kubernetes keeps a finished Job, its pods and their logs) has them deleted a day after
// the job ended, so that they do not pile up; until then its owner can read them.
func TestEndedJobsTheSchedulerKeepsAreDeletedADayLater(t *testing.T) {
	svc, f, clock, _ := schedService(t, qm.Started{State: qm.Queued})
	ctx := context.Background()
	l := mustRequest(t, svc, "alice@acme.example", 1, "train")
	f.mu.Lock()
	for i := range f.jobs {
		if f.jobs[i].Ref == l.Ref {
			f.jobs[i].State, f.jobs[i].EndedAt, f.jobs[i].Kept = qm.JobCompleted, clock.Now(), true
		}
	}
	// A job of the same kind that Slurm forgets on its own is left to it.
	f.jobs = append(f.jobs, qm.Job{Lease: 999, Ref: "555", State: qm.JobCompleted, EndedAt: clock.Now()})
	f.mu.Unlock()
	if rep, err := svc.Reconcile(ctx); err != nil || rep.Ended != 1 || rep.Removed != 0 {
		t.Fatalf("the pass that ends the lease: %v %v", rep, err)
	}
	clock.Advance(23 * time.Hour)
	if rep, err := svc.Reconcile(ctx); err != nil || rep.Removed != 0 || len(f.cancels) != 0 {
		t.Fatalf("23 hours after it ended: %v %v, cancels %v", rep, err, f.cancels)
	}
	clock.Advance(2 * time.Hour)
	if rep, err := svc.Reconcile(ctx); err != nil || rep.Removed != 1 || len(f.cancels) != 1 || f.cancels[0] != l.Ref {
		t.Fatalf("a day after it ended: %v %v, cancels %v", rep, err, f.cancels)
	}
	if got := mustGet(t, svc, l.ID); got.State != qm.Released {
		t.Errorf("the lease is %s after its job was deleted", got.State)
	}
}
