package slurm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestExtendRaisesJobTimeLimit: extending a running lease raises its Slurm job's time limit at
// once (scontrol update TimeLimit), so Slurm does not end the job at the old limit.
func TestExtendRaisesJobTimeLimit(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	l := e.request("alice@acme.example", 1, "interactive", time.Hour, "", nil).Lease
	l = e.waitLease(l.ID, qm.Active)
	if got := e.job(l.Ref).TimeLimit; got != time.Hour {
		t.Fatalf("job %s has a time limit of %s, want 1h", l.Ref, got)
	}
	if _, err := e.svc.Extend(ctx, "alice@acme.example", l.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := e.job(l.Ref).TimeLimit; got != 2*time.Hour {
		t.Errorf("after extending by 1h, job %s has a time limit of %s, want 2h", l.Ref, got)
	}
}

// TestExtendWithoutSlurmTimeLimit: without a cluster, through the backend's command runner: an
// extension of a running lease runs scontrol update JobId=N TimeLimit=MINUTES with the lease's
// new length; when Slurm refuses it (only operators may raise a limit), the extension is
// refused saying it did not reach the scheduler, and the lease's end stays where it was.
func TestExtendWithoutSlurmTimeLimit(t *testing.T) {
	refuse := false
	s := &stub{reply: func(name string, args []string) (string, error) {
		switch {
		case name == "sbatch":
			return "4242\n", nil
		case name == "scontrol" && len(args) > 0 && args[0] == "show":
			return "JobId=4242 JobName=qm JobState=RUNNING Reason=None NodeList=gpu01 StartTime=2026-11-30T09:00:00 EndTime=2026-11-30T11:00:00", nil
		case name == "scontrol" && len(args) > 0 && args[0] == "update" && refuse:
			return "", errors.New("exit status 1: slurm_update error: Access/permission denied")
		case name == "squeue":
			return `{"jobs": []}`, nil
		case name == "sinfo":
			return `{"sinfo": []}`, nil // a cluster that lists no node: Slurm places the lease
		}
		return "", nil
	}}
	b := stubBackend(t, s)
	p := examplePolicy(t)
	svc := &qm.Service{Policy: p, Store: storetest.Open(t, storetest.SQLite(t)), Backend: b,
		Clock: sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)), Directory: p, Logger: storetest.Logger(t)}
	ctx := context.Background()
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 1, Class: "interactive", Duration: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	l := out.Lease
	if l.State != qm.Active || l.Ref != "4242" {
		t.Fatalf("the lease is %s with job %q; calls %v", l.State, l.Ref, s.calls)
	}
	if _, err := svc.Extend(ctx, "alice@acme.example", l.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	var updates []string
	for _, c := range s.called("scontrol") {
		if c[1] == "update" {
			updates = append(updates, strings.Join(c, " "))
		}
	}
	if len(updates) != 1 || updates[0] != "scontrol update JobId=4242 TimeLimit=180" {
		t.Errorf("scontrol updates %v; want the limit raised to the lease's 3h", updates)
	}

	before, _ := svc.Get(ctx, l.ID)
	refuse = true
	_, err = svc.Extend(ctx, "alice@acme.example", l.ID, time.Hour)
	if err == nil {
		t.Fatal("the extension was accepted though Slurm refused the time limit")
	}
	if msg := qm.ErrorMessage(err); !strings.Contains(msg, "did not reach the scheduler") {
		t.Errorf("the refusal says %q", msg)
	}
	after, _ := svc.Get(ctx, l.ID)
	if !after.ExpiresAt.Equal(before.ExpiresAt) || after.Duration != before.Duration {
		t.Errorf("the lease moved though Slurm refused: ends %s (was %s), %s long (was %s)", after.ExpiresAt, before.ExpiresAt, after.Duration, before.Duration)
	}
}
