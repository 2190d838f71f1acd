package qm_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
)

// idleGPUs is telemetry that reports a lease's GPUs idle since it started, seen just now.
type idleGPUs struct{ clock *sim.Clock }

func (g idleGPUs) Activity(_ context.Context, l *qm.Lease) (qm.Activity, bool) {
	return qm.Activity{LastActive: l.StartedAt, Seen: g.clock.Now()}, true
}

// TestASuspendedJobIsNotJudgedIdle: a running workspace whose job the scheduler suspended keeps
// its end and is not warned as idle while it cannot run, across a restart of the service; once
// resumed its owner is told, and its idle period starts over from then.
func TestASuspendedJobIsNotJudgedIdle(t *testing.T) {
	svc, f, clock, notes := schedService(t, qm.Started{State: qm.Queued, Connect: "ssh -p 2222 alice@" + qm.NodePlaceholder})
	svc.Telemetry = idleGPUs{clock}
	ctx := context.Background()
	l := mustRequest(t, svc, "alice@acme.example", 1, "interactive")
	f.Set(l.Ref, qm.JobRunning, "")
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	ran := mustGet(t, svc, l.ID)
	suspend := func(on bool) {
		f.mu.Lock()
		for i := range f.jobs {
			if f.jobs[i].Ref == l.Ref {
				f.jobs[i].Suspended, f.jobs[i].Reason = on, map[bool]string{true: "Slurm: SUSPENDED"}[on]
			}
		}
		f.mu.Unlock()
	}
	suspend(true)
	clock.Advance(5 * time.Minute)
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	// A new service on the same database, as a restarted serve has.
	restarted := &qm.Service{Policy: svc.Policy, Store: svc.Store, Clock: clock, Backend: f, Telemetry: svc.Telemetry,
		Directory: svc.Directory, Notifier: notes, Logger: svc.Logger}
	clock.Advance(40 * time.Minute) // past the class's idle timeout of 30m
	for range 2 {
		if _, err := restarted.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if err := restarted.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	paused := mustGet(t, svc, l.ID)
	if paused.State != qm.Active || !qm.Suspended(paused) || !paused.ExpiresAt.Equal(ran.ExpiresAt) || !paused.WarnedAt.IsZero() {
		t.Errorf("suspended: %s %q, ends %s (was %s), warned %s", paused.State, paused.Reason, paused.ExpiresAt, ran.ExpiresAt, paused.WarnedAt)
	}
	if got := notes.Kinds(l.ID); len(got) != 2 || got[1] != qm.NoticeSuspended {
		t.Errorf("notices while suspended: %v; want granted, suspended once", got)
	}
	suspend(false)
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if err := svc.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	again := mustGet(t, svc, l.ID)
	if again.State != qm.Active || qm.Suspended(again) || !again.WarnedAt.IsZero() {
		t.Errorf("resumed: %s %q, warned %s; want active, not warned at once", again.State, again.Reason, again.WarnedAt)
	}
	if got := notes.Kinds(l.ID); len(got) != 3 || got[2] != qm.NoticeGranted {
		t.Errorf("notices once resumed: %v; want granted, suspended, granted", got)
	}
	clock.Advance(31 * time.Minute)
	if err := svc.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if got := notes.Kinds(l.ID); len(got) != 4 || got[3] != qm.NoticeIdleWarning {
		t.Errorf("notices 31m after it resumed, idle: %v; want an idle warning", got)
	}
}
