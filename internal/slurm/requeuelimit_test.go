package slurm_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// TestRequeuedJobEndsWithItsLease: a requeued job's time limit starts again when it runs again,
// so without more it would end (and its template's --signal warning before the limit, a
// checkpoint, would come) after its lease has ended and cancelled it. Once it runs again, its
// limit is what its lease has left: Slurm ends it within the minute after the lease's end, not
// as long after it as the job waited in the queue. An extension then raises it to the new end.
func TestRequeuedJobEndsWithItsLease(t *testing.T) {
	e := newEnv(t)
	l := e.request("bob@acme.example", 1, "interactive", time.Hour, "", nil).Lease
	ran := e.waitLease(l.ID, qm.Active)
	requeued := time.Now()
	e.slurmCmd("scontrol", "requeue", ran.Ref)
	e.waitFor(l.ID, "to be requeued", qm.Requeued)
	// It waits in the queue for 75 s (an administrator's begin time, as long as Slurm's own
	// requeue delay would be about), longer than the minute the limit is rounded to.
	e.beginRequeued(ran.Ref, requeued, "now+75")
	end := time.Now().Add(3 * time.Minute)
	for e.job(ran.Ref).State != "RUNNING" {
		if time.Now().After(end) {
			t.Fatalf("job %s did not run again within 3 minutes", ran.Ref)
		}
		time.Sleep(time.Second)
	}
	again := e.waitFor(l.ID, "to run again", func(l *qm.Lease) bool { return !qm.Requeued(l) })
	e.pass(l.ID)
	slurmEnd := e.job(ran.Ref).EndTime
	if slurmEnd.After(again.ExpiresAt.Add(time.Minute)) || slurmEnd.Before(again.ExpiresAt) {
		t.Errorf("running again, Slurm ends job %s at %s; its lease ends at %s: want within the minute after it",
			ran.Ref, slurmEnd.UTC().Format(time.TimeOnly), again.ExpiresAt.UTC().Format(time.TimeOnly))
	}

	if _, err := e.svc.Extend(t.Context(), "bob@acme.example", l.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	longer := e.pass(l.ID)
	e.pass(l.ID)
	slurmEnd = e.job(ran.Ref).EndTime
	if slurmEnd.After(longer.ExpiresAt.Add(time.Minute)) || slurmEnd.Before(longer.ExpiresAt) {
		t.Errorf("extended, Slurm ends job %s at %s; its lease ends at %s: want within the minute after it",
			ran.Ref, slurmEnd.UTC().Format(time.TimeOnly), longer.ExpiresAt.UTC().Format(time.TimeOnly))
	}
}
