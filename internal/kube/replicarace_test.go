package kube_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/qm/qmtest"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// hooked is a Kubernetes backend whose Start runs after once it has created the lease's objects,
// before the service records what Start said: the moment another replica's pass may land.
type hooked struct {
	*kube.Backend
	after func(ctx context.Context)
}

func (h *hooked) Start(ctx context.Context, l *qm.Lease) (qm.Started, error) {
	st, err := h.Backend.Start(ctx, l)
	if err == nil && h.after != nil {
		h.after(ctx)
	}
	return st, err
}

// replicas are two replicas of serve on one PostgreSQL database and one (fake) cluster, each
// with its own backend, store connection and clock. a's backend runs a hook inside Start.
type replicas struct {
	t      *testing.T
	cs     *fake.Clientset
	a, b   *qm.Service
	hook   *hooked
	notes  *qmtest.NoticeLog
	clock  *sim.Clock // b's
	aclock *sim.Clock
}

func newReplicas(t *testing.T) *replicas {
	t.Helper()
	db := storetest.Postgres(t)
	p := examplePolicy(t)
	r := &replicas{t: t, notes: &qmtest.NoticeLog{},
		cs: fake.NewClientset(pvc("qm-vision", "team-storage"), gpuNode("gpu-a", "interactive", 4, true), gpuNode("gpu-b", "train", 8, true))}
	now := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	r.hook = &hooked{Backend: newBackend(t, p, r.cs)}
	r.clock, r.aclock = sim.NewClock(now), sim.NewClock(now)
	r.a = &qm.Service{Policy: p, Store: storetest.Open(t, db), Backend: r.hook, Clock: r.aclock,
		Directory: p, Notifier: r.notes, Logger: storetest.Logger(t)}
	r.b = &qm.Service{Policy: p, Store: storetest.Open(t, db), Backend: newBackend(t, p, r.cs), Clock: r.clock,
		Directory: p, Notifier: r.notes, Logger: storetest.Logger(t)}
	r.passOfB()
	return r
}

func (r *replicas) passOfB() qm.ReconcileReport {
	r.t.Helper()
	rep, err := r.b.Reconcile(context.Background())
	if err != nil {
		r.t.Errorf("the other replica's pass: %v", err)
	}
	return rep
}

func (r *replicas) lease(id qm.LeaseID) *qm.Lease {
	r.t.Helper()
	l, err := r.b.Get(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return l
}

const (
	wantJob     = "job/qm-vision/qm-l-1-ssh-shell"
	wantConnect = "ssh -p 2222 alice@qm-l-1-ssh-shell.qm-vision.svc"
)

// TestAnotherReplicasPassDuringStartKeepsTheAddress: with two replicas of serve on one database,
// the reconcile pass of one lands while the other's Start has created a workspace's Job and not
// yet recorded it, and the Job's pod waits to be scheduled. The pass leaves the Job to that Start, so that the lease keeps the address
// Start rendered, and its owner is told how to connect when the pod runs; before, the pass took
// the Job first and the workspace became active with no address at all.
func TestAnotherReplicasPassDuringStartKeepsTheAddress(t *testing.T) {
	r := newReplicas(t)
	w := &world{t: t, cs: r.cs}
	r.hook.after = func(context.Context) {
		// The Job controller makes its pod, which waits to be scheduled; then the pass lands.
		w.addJobPod("qm-vision", "qm-l-1-ssh-shell", corev1.PodPending, "")
		r.passOfB()
	}
	out, err := r.a.Request(context.Background(), qm.LeaseRequest{User: "alice@acme.example", GPUs: 1, Class: "interactive", Duration: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r.hook.after = nil
	if out.Lease.Ref != wantJob || out.Lease.Connect != wantConnect {
		t.Errorf("the request's reply has job %q, connect %q; want %q, %q", out.Lease.Ref, out.Lease.Connect, wantJob, wantConnect)
	}
	if kinds := r.notes.Kinds(out.Lease.ID); len(kinds) != 0 {
		t.Errorf("the owner was told %v while the workspace was being started", kinds)
	}

	w.setPod("qm-vision", "qm-l-1-ssh-shell-x1", running("gpu-a"))
	if rep := r.passOfB(); rep.Activated != 1 {
		t.Errorf("report %v", rep)
	}
	l := r.lease(out.Lease.ID)
	if l.State != qm.Active || l.Connect != wantConnect {
		t.Errorf("%s is %s with connect %q; want active with %q", l.ID, l.State, l.Connect, wantConnect)
	}
	granted := r.notes.Of(qm.NoticeGranted, l.ID)
	if len(granted) != 1 {
		t.Fatalf("the owner was told %d times that %s is ready, want once", len(granted), l.ID)
	}
	if granted[0].Lease.Connect != wantConnect {
		t.Errorf("the owner was told %s is ready with connect %q; want %q", l.ID, granted[0].Lease.Connect, wantConnect)
	}
}

// TestAJobWhoseSubmitterDiedIsAdoptedAfterTheGrace: a replica that created a workspace's Job and
// died before recording it leaves its claim on the lease; the other replica's passes leave the Job
// alone while the claim holds, and adopt it once the claim has lapsed (QM_SUBMIT_GRACE), instead
// of leaving the lease without its Job or cancelling the Job as an orphan.
func TestAJobWhoseSubmitterDiedIsAdoptedAfterTheGrace(t *testing.T) {
	r := newReplicas(t)
	ctx, die := context.WithCancel(context.Background())
	r.hook.after = func(context.Context) { die() } // nothing it does after this reaches the database
	_, _ = r.a.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 1, Class: "interactive", Duration: 2 * time.Hour})
	ls, err := r.b.List(context.Background(), qm.LeaseFilter{States: qm.LiveStates})
	if err != nil || len(ls) != 1 {
		t.Fatalf("live leases: %v, %v", ls, err)
	}
	id := ls[0].ID
	if l := r.lease(id); l.State != qm.Provisioning || l.Ref != "" {
		t.Fatalf("after the crash %s is %s with job %q; want provisioning with none recorded", id, l.State, l.Ref)
	}
	(&world{t: t, cs: r.cs}).addJobPod("qm-vision", "qm-l-1-ssh-shell", corev1.PodRunning, "gpu-a")

	rep := r.passOfB()
	if l := r.lease(id); l.State != qm.Provisioning || l.Ref != "" || rep.Adopted != 0 || rep.Cancelled != 0 {
		t.Errorf("while the submission's claim holds, the other replica's pass made %s %s with job %q (%v); want it left alone", id, l.State, l.Ref, rep)
	}
	r.clock.Advance(qm.DefaultSubmitGrace + time.Second)
	rep = r.passOfB()
	l := r.lease(id)
	if l.State != qm.Active || l.Ref != wantJob || rep.Adopted != 1 {
		t.Errorf("after the grace %s is %s with job %q (%v); want active with %s, adopted", id, l.State, l.Ref, rep, wantJob)
	}
	if granted := r.notes.Of(qm.NoticeGranted, id); len(granted) != 1 {
		t.Errorf("the owner was told %d times that %s is ready, want once", len(granted), id)
	}
}

// TestASlowSubmissionKeepsItsClaim: a submission that takes longer than QM_SUBMIT_GRACE (an API
// server or a Slurm controller slow to answer) renews its claim while it runs, so that the other
// replica's pass still leaves its job to it, rather than taking it for one whose replica died.
func TestASlowSubmissionKeepsItsClaim(t *testing.T) {
	r := newReplicas(t)
	const grace = 50 * time.Millisecond
	r.a.SubmitGrace, r.b.SubmitGrace = grace, grace
	w := &world{t: t, cs: r.cs}
	r.hook.after = func(context.Context) {
		w.addJobPod("qm-vision", "qm-l-1-ssh-shell", corev1.PodPending, "")
		// The submission goes on for a minute, many times the grace.
		r.aclock.Advance(time.Minute)
		r.clock.Advance(time.Minute)
		end := time.Now().Add(30 * time.Second)
		for {
			l := r.lease(1)
			if l.SubmittingUntil.After(r.clock.Now()) {
				break
			}
			if time.Now().After(end) {
				t.Errorf("the claim of the submission in flight was not renewed: it lapses at %s, now is %s", l.SubmittingUntil, r.clock.Now())
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		r.passOfB()
	}
	out, err := r.a.Request(context.Background(), qm.LeaseRequest{User: "alice@acme.example", GPUs: 1, Class: "interactive", Duration: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r.hook.after = nil
	if out.Lease.Ref != wantJob || out.Lease.Connect != wantConnect {
		t.Errorf("the request's reply has job %q, connect %q; want %q, %q", out.Lease.Ref, out.Lease.Connect, wantJob, wantConnect)
	}
	if kinds := r.notes.Kinds(out.Lease.ID); len(kinds) != 0 {
		t.Errorf("the owner was told %v while the workspace was being started", kinds)
	}
	if l := r.lease(out.Lease.ID); !l.SubmittingUntil.IsZero() {
		t.Errorf("%s keeps a claim until %s after its submission was recorded", l.ID, l.SubmittingUntil)
	}
}

// TestAJobWithNoPodsYetIsAdoptedOnce: the Job of a replica that died before recording it has no
// pod yet when the other replica's pass adopts it (the Job controller has not made it). The pass
// that counts it adopted records it on its lease, and the next pass does not count it again;
// before, every pass said it adopted the Job while the lease never recorded it.
func TestAJobWithNoPodsYetIsAdoptedOnce(t *testing.T) {
	r := newReplicas(t)
	ctx, die := context.WithCancel(context.Background())
	r.hook.after = func(context.Context) { die() }
	_, _ = r.a.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 1, Class: "interactive", Duration: 2 * time.Hour})
	ls, err := r.b.List(context.Background(), qm.LeaseFilter{States: qm.LiveStates})
	if err != nil || len(ls) != 1 {
		t.Fatalf("live leases: %v, %v", ls, err)
	}
	id := ls[0].ID
	r.clock.Advance(qm.DefaultSubmitGrace + time.Second)

	rep := r.passOfB()
	l := r.lease(id)
	if rep.Adopted != 1 || l.Ref != wantJob || l.State != qm.Provisioning {
		t.Errorf("the pass that adopts the Job with no pod yet says %v; %s is %s with job %q; want 1 adopted, provisioning with %s", rep, id, l.State, l.Ref, wantJob)
	}
	if rep := r.passOfB(); rep.Adopted != 0 || rep.Cancelled != 0 {
		t.Errorf("the next pass says %v; want nothing adopted again or cancelled", rep)
	}

	(&world{t: t, cs: r.cs}).addJobPod("qm-vision", "qm-l-1-ssh-shell", corev1.PodRunning, "gpu-a")
	rep = r.passOfB()
	if l := r.lease(id); l.State != qm.Active || l.Ref != wantJob || rep.Adopted != 0 || rep.Activated != 1 {
		t.Errorf("once its pod runs %s is %s with job %q (%v); want active with %s, activated, not adopted again", id, l.State, l.Ref, rep, wantJob)
	}
}

// TestAJobWhoseSubmitterIsKnownStoppedIsAdoptedAtOnce: the claim names the process that holds
// it. Once it is released as that of a process known to have stopped (a process restarted on
// the same host does so at start), the other replica's next pass adopts the Job at once, without
// waiting for the claim to lapse; a claim of a process not released still holds.
func TestAJobWhoseSubmitterIsKnownStoppedIsAdoptedAtOnce(t *testing.T) {
	r := newReplicas(t)
	r.a.Submitter = "host-a/4242@1764000000000000000"
	ctx, die := context.WithCancel(context.Background())
	r.hook.after = func(context.Context) { die() }
	_, _ = r.a.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 1, Class: "interactive", Duration: 2 * time.Hour})
	ls, err := r.b.List(context.Background(), qm.LeaseFilter{States: qm.LiveStates})
	if err != nil || len(ls) != 1 {
		t.Fatalf("live leases: %v, %v", ls, err)
	}
	id := ls[0].ID
	if l := r.lease(id); l.SubmittingBy != r.a.Submitter {
		t.Fatalf("the claim on %s names %q; want the process that submits, %q", id, l.SubmittingBy, r.a.Submitter)
	}
	(&world{t: t, cs: r.cs}).addJobPod("qm-vision", "qm-l-1-ssh-shell", corev1.PodRunning, "gpu-a")
	db := r.b.Store.(interface {
		ReleaseSubmissionClaims(context.Context, []string) (int64, error)
	})
	if n, err := db.ReleaseSubmissionClaims(context.Background(), []string{"host-a/999@1"}); err != nil || n != 0 {
		t.Errorf("releasing another process's claims released %d (%v)", n, err)
	}
	if rep := r.passOfB(); rep.Adopted != 0 {
		t.Errorf("with the claim held, the pass adopted: %v", rep)
	}
	if n, err := db.ReleaseSubmissionClaims(context.Background(), []string{r.a.Submitter}); err != nil || n != 1 {
		t.Fatalf("released %d claims (%v); want 1", n, err)
	}
	rep := r.passOfB()
	if l := r.lease(id); l.State != qm.Active || l.Ref != wantJob || rep.Adopted != 1 {
		t.Errorf("once the claim of the stopped process is released, %s is %s with job %q (%v); want active with %s, adopted at once", id, l.State, l.Ref, rep, wantJob)
	}
}
