package qm_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// TestARequeuedJobsWaitIsNotCounted: the time a running workspace's job waits in the scheduler's
// queue after a requeue holds no GPU: the team's week counts what the lease held before and after
// it, across a restart of the service, and no more once it has ended. A suspended job keeps its
// GPUs, and its time counts.
func TestARequeuedJobsWaitIsNotCounted(t *testing.T) {
	svc, f, clock, _ := schedService(t, qm.Started{State: qm.Queued, Connect: "ssh -p 2222 alice@" + qm.NodePlaceholder})
	ctx := context.Background()
	week := func() float64 {
		t.Helper()
		u, _, err := svc.TeamUsage(ctx, "vision")
		if err != nil {
			t.Fatal(err)
		}
		return u.GPUHoursWeek
	}
	// Two GPUs for 2h.
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 2, Class: "train", Duration: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	l := out.Lease
	setJob(f, l.Ref, qm.JobRunning, "", "gpu07", false)
	reconcile(t, svc)
	clock.Advance(30 * time.Minute)
	setJob(f, l.Ref, qm.JobPending, "Slurm: BeginTime", "", false)
	reconcile(t, svc)
	clock.Advance(20 * time.Minute)
	// A restarted service on the same database carries on.
	svc = &qm.Service{Policy: svc.Policy, Store: svc.Store, Clock: clock, Backend: f, Directory: svc.Directory, Notifier: svc.Notifier, Logger: svc.Logger}
	reconcile(t, svc)
	if got := week(); got != 2*(2-20.0/60) {
		t.Errorf("20 minutes into the requeue, the week counts %v GPU-hours of the lease; want its 2h less the 20m it held nothing, of 2 GPUs", got)
	}
	clock.Advance(10 * time.Minute)
	setJob(f, l.Ref, qm.JobRunning, "", "gpu12", false)
	reconcile(t, svc)
	clock.Advance(10 * time.Minute)
	setJob(f, l.Ref, qm.JobRunning, "Slurm: SUSPENDED", "", true)
	reconcile(t, svc)
	clock.Advance(15 * time.Minute)
	setJob(f, l.Ref, qm.JobRunning, "", "", false)
	reconcile(t, svc)
	clock.Advance(5 * time.Minute)
	if _, err := svc.Release(ctx, "alice@acme.example", l.ID); err != nil {
		t.Fatal(err)
	}
	// It ran 30m, waited 30m, ran 10m, was suspended 15m (holding its GPUs), ran 5m: 60m held.
	if got := week(); got != 2 {
		t.Errorf("the week counts %v GPU-hours of a lease that held 2 GPUs for 1h of its 1h30m; want 2", got)
	}
	ended := mustGet(t, svc, l.ID)
	if got := qm.HeldFor(ended, ended.StartedAt, ended.EndedAt); got != time.Hour {
		t.Errorf("the released lease held its GPUs for %s; want 1h", got)
	}
}
