package slurm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// An administrator changes the comment of a running lease's job (scontrol update comment=…, as a
// site's own tooling may): squeue no longer lists the job as the service's, though it runs on and
// holds its GPUs. The lease fails, its owner is told why in words that match what squeue shows
// (the job is there, not gone), and the job is cancelled, so that nothing runs in Slurm that the
// service no longer bills or watches.
func TestJobWhoseCommentChangedEndsWithItsLease(t *testing.T) {
	e := newEnv(t)
	l := e.request("alice@acme.example", 1, "interactive", time.Hour, "", nil).Lease
	l = e.waitLease(l.ID, qm.Active)
	e.slurmCmd("scontrol", "update", "JobId="+l.Ref, "Comment=site-tag")
	l = e.waitLease(l.ID, qm.Failed)
	n := e.notes.Of(qm.NoticeFailed, l.ID)
	if len(n) != 1 {
		t.Fatalf("failed notices %+v", n)
	}
	if strings.Contains(n[0].Reason, "gone") || !strings.Contains(n[0].Reason, "comment") || !strings.Contains(n[0].Reason, l.Ref) {
		t.Errorf("the owner reads %q; want it to say that job %s is still in Slurm with its comment changed", n[0].Reason, l.Ref)
	}
	j := e.waitJob(l.Ref, "CANCELLED", "COMPLETING", "COMPLETED")
	if j.State == "COMPLETED" {
		t.Errorf("job %s ended %s; want it cancelled with its lease", l.Ref, j.State)
	}
}

// A live lease whose recorded job id Slurm now gives another job (a controller started afresh
// numbers jobs from 1 again) fails as gone, and that other job, someone else's, runs on.
func TestGoneJobsIdTakenByAnotherJobIsLeftAlone(t *testing.T) {
	e := newEnv(t)
	out := e.slurmCmd("sbatch", "--parsable", "-p", "interactive", "--gres=gpu:l40s:1", "-t", "10",
		"-J", "someone-else", "-o", "/dev/null", "--wrap", "sleep 600")
	other, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	t.Cleanup(func() { e.slurmCmd("scancel", other) })
	e.waitJob(other, "RUNNING")
	l := e.storeLease(qm.Active)
	l.Ref, l.Node, l.StartedAt, l.ExpiresAt = other, e.nodeName(), e.clock.Now(), e.clock.Now().Add(time.Hour)
	ctx := context.Background()
	if err := e.svc.Store.Update(ctx, nil, func(tx qm.Tx) error { return tx.UpdateLease(ctx, l, qm.Active) }); err != nil {
		t.Fatal(err)
	}
	l = e.waitLease(l.ID, qm.Failed)
	if !strings.Contains(l.Reason, "gone from the scheduler") {
		t.Errorf("lease %s failed with %q; want its job gone from the scheduler", l.ID, l.Reason)
	}
	time.Sleep(time.Second)
	if j := e.job(other); j.State != "RUNNING" {
		t.Errorf("another's job %s is %s after the lease that had recorded its id failed; want it left running", other, j.State)
	}
}
