package qm_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// setJob moves the lease's job in the fake scheduler: its state, reason, node and whether it is
// suspended.
func setJob(f *fakeScheduler, ref string, st qm.JobState, reason, node string, suspended bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.jobs {
		if f.jobs[i].Ref == ref {
			f.jobs[i].State, f.jobs[i].Reason, f.jobs[i].Suspended = st, reason, suspended
			if node != "" {
				f.jobs[i].Node = node
			}
		}
	}
}

func reconcile(t *testing.T, svc *qm.Service) {
	t.Helper()
	if _, err := svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// pausingGPUs is telemetry that reports a lease's GPUs idle since it started and, the first time
// it is asked while pause is set, runs pause first: the scheduler pauses the job, and a reconcile
// pass sees it, between the tick's reading of the leases and its judging them.
type pausingGPUs struct {
	idleGPUs
	pause *func()
}

func (g pausingGPUs) Activity(ctx context.Context, l *qm.Lease) (qm.Activity, bool) {
	if p := *g.pause; p != nil {
		*g.pause = nil
		p()
	}
	return g.idleGPUs.Activity(ctx, l)
}

// TestAPauseIsToldOnce: a lease whose job the scheduler suspends or puts back in its queue is
// told so once per pause: not again after the owner keeps or extends it, nor when the idle
// check that was under way as the pause began comes to it; a new pause is told again.
func TestAPauseIsToldOnce(t *testing.T) {
	for _, tc := range []struct {
		name      string
		st        qm.JobState
		reason    string
		suspended bool
		kind      qm.NoticeKind
	}{
		{"requeued", qm.JobPending, "Slurm: JobHeldAdmin", false, qm.NoticeRequeued},
		{"suspended", qm.JobRunning, "Slurm: SUSPENDED", true, qm.NoticeSuspended},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, f, clock, notes := schedService(t, qm.Started{State: qm.Queued, Connect: "ssh -p 2222 alice@" + qm.NodePlaceholder})
			var pause func()
			svc.Telemetry = pausingGPUs{idleGPUs{clock}, &pause}
			ctx := context.Background()
			l := mustRequest(t, svc, "alice@acme.example", 1, "interactive")
			setJob(f, l.Ref, qm.JobRunning, "", "", false)
			reconcile(t, svc)
			told := func() int { return len(notes.Of(tc.kind, l.ID)) }
			// Idle past the class's timeout; the job is paused while the tick judges it.
			clock.Advance(31 * time.Minute)
			pause = func() {
				setJob(f, l.Ref, tc.st, tc.reason, "", tc.suspended)
				reconcile(t, svc)
			}
			if err := svc.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			if told() != 1 {
				t.Fatalf("pause told %d times, want once (notices %v)", told(), notes.Kinds(l.ID))
			}
			if got := mustGet(t, svc, l.ID); got.State != qm.Active || !got.WarnedAt.IsZero() {
				t.Errorf("paused while judged: %s %q, warned %s; want active and not warned", got.State, got.Reason, got.WarnedAt)
			}
			if _, err := svc.Keep(ctx, "alice@acme.example", l.ID); err == nil {
				t.Fatalf("kept %s, which has no idle warning open", l.ID) // refused: nothing changes
			}
			reconcile(t, svc)
			if _, err := svc.Extend(ctx, "alice@acme.example", l.ID, 30*time.Minute); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				clock.Advance(time.Minute)
				reconcile(t, svc)
				if err := svc.Tick(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if told() != 1 {
				t.Errorf("after a refused keep and an extension, the pause was told %d times; want once (notices %v)", told(), notes.Kinds(l.ID))
			}
			// Running again, then paused again: the new pause is told.
			setJob(f, l.Ref, qm.JobRunning, "", "", false)
			reconcile(t, svc)
			setJob(f, l.Ref, tc.st, tc.reason, "", tc.suspended)
			reconcile(t, svc)
			if told() != 2 {
				t.Errorf("a second pause was told %d times in all; want twice (notices %v)", told(), notes.Kinds(l.ID))
			}
		})
	}
}

// TestAPauseFromBeforePausesWereRecordedIsNotToldAgain: a lease paused by a version that knew a
// pause by its reason alone (upgraded while its job waits in the queue) is not told of it again;
// the pause is recorded from the first pass on, and it is told when the job runs again.
func TestAPauseFromBeforePausesWereRecordedIsNotToldAgain(t *testing.T) {
	svc, f, clock, notes := schedService(t, qm.Started{State: qm.Queued, Connect: "ssh -p 2222 alice@" + qm.NodePlaceholder})
	ctx := context.Background()
	l := mustRequest(t, svc, "alice@acme.example", 1, "train")
	setJob(f, l.Ref, qm.JobRunning, "", "", false)
	reconcile(t, svc)
	setJob(f, l.Ref, qm.JobPending, "Slurm: BeginTime", "", false)
	reconcile(t, svc)
	// As the version before left it: the reason says it, no pause recorded.
	if err := svc.Store.Update(ctx, nil, func(tx qm.Tx) error {
		c, err := tx.GetLease(ctx, l.ID)
		if err != nil {
			return err
		}
		c.Pauses = nil
		return tx.UpdateLease(ctx, c, c.State)
	}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(10 * time.Minute)
	reconcile(t, svc)
	got := mustGet(t, svc, l.ID)
	if n := len(notes.Of(qm.NoticeRequeued, l.ID)); n != 1 || !qm.Requeued(got) || len(got.Pauses) != 1 {
		t.Errorf("after the upgrade: told %d times, requeued %v, pauses %+v; want told once, still requeued, its pause recorded", n, qm.Requeued(got), got.Pauses)
	}
	setJob(f, l.Ref, qm.JobRunning, "", "", false)
	reconcile(t, svc)
	if kinds := notes.Kinds(l.ID); kinds[len(kinds)-1] != qm.NoticeGranted {
		t.Errorf("notices once it runs again: %v; want it told", kinds)
	}
}
