package slurm_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// TestJobSlurmNeverStartsFailsTheLease: a partition whose time limit is shorter than a lease
// (MaxTime) keeps the lease's job pending for good (Slurm: PartitionTimeLimit). The lease is
// failed, saying why in words, rather than queued for ever, and its job leaves Slurm's queue.
func TestJobSlurmNeverStartsFailsTheLease(t *testing.T) {
	e := newEnv(t)
	e.slurmCmd("scontrol", "update", "PartitionName=interactive", "MaxTime=30")
	t.Cleanup(func() { e.slurmCmd("scontrol", "update", "PartitionName=interactive", "MaxTime=INFINITE") })
	out := e.request("alice@acme.example", 1, "interactive", time.Hour, "", nil)
	l := e.waitLease(out.Lease.ID, qm.Failed)
	for _, want := range []string{"PartitionTimeLimit", "partition interactive", "time limit"} {
		if !strings.Contains(l.Reason, want) {
			t.Errorf("%s failed with %q, which does not say %q", l.ID, l.Reason, want)
		}
	}
	t.Logf("%s: %s", l.ID, l.Reason)
	if n := e.notes.Of(qm.NoticeFailed, l.ID); len(n) != 1 {
		t.Errorf("the owner was told %d times, want once", len(n))
	}
	if l.Ref == "" {
		t.Fatalf("%s recorded no job", l.ID)
	}
	e.waitJob(l.Ref, "CANCELLED")
}
