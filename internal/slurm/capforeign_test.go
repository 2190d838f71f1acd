package slurm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// A request that waits under the shared classes' capacity share while jobs outside Quartermaster
// hold the class's GPUs says so: the cap counts what those jobs hold, but the class's own leases
// hold none of it, and "interactive ... holds 1" alone would say they did.
func TestCapWaitNamesGPUsHeldOutsideQuartermaster(t *testing.T) {
	e := newEnv(t)
	// The example policy's shared class, interactive, may hold 15 % of the test cluster's 12
	// GPUs: 1. A job submitted by hand, not by the service, takes an L40S.
	ref := strings.TrimSpace(e.slurmCmd("sbatch", "--parsable", "-p", "interactive", "--gres=gpu:l40s:1", "-t", "5",
		"-o", "/dev/null", "--wrap", "sleep 300"))
	t.Cleanup(func() { e.slurmCmd("scancel", ref) })
	e.waitJob(ref, "RUNNING")
	if _, err := e.svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	l := e.request("bob@acme.example", 1, "interactive", time.Hour, "", nil).Lease
	if l.State != qm.Queued {
		t.Fatalf("%s is %s (%s); want it waiting under the capacity share", l.ID, l.State, l.Reason)
	}
	if !strings.Contains(l.Reason, "capacity share") || !strings.Contains(l.Reason, "other jobs on the nodes hold 1 of them") {
		t.Errorf("%s waits because %q; want it to say that another job on the node holds the GPU the cap counts", l.ID, l.Reason)
	}
}
