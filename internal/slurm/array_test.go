package slurm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/slurm"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/workload"
)

// trialsTemplate is a job array for tests: every task writes done-<index> in the job directory
// when it ends; the others sleep for a second, and task 0 waits (up to a minute) until every other
// task has written its file, then sleeps for its long parameter, so task 0 runs on, for that long,
// after the array's own job record (Slurm gives it to the task it starts last) has ended.
const trialsTemplate = `name: trials
version: 1
title: Trials
description: A job array whose first task runs longest, for tests.
tags: [test]
kind: batch
resources: {gpus: 2, max_gpus: 8, cpus_per_gpu: 1, memory_gib_per_gpu: 1}
array: {count: trials, gpus_per_task: per}
example: trials=3 per=1
parameters:
  - name: trials
    type: int
    default: "3"
    min: "1"
    max: "16"
    description: Number of tasks.
  - name: per
    type: int
    default: "1"
    min: "1"
    max: "8"
    description: GPUs per task.
  - name: long
    type: int
    default: "5"
    min: "0"
    max: "600"
    description: How long task 0 runs on after the others have ended.
  - name: code
    type: int
    default: "0"
    min: "0"
    max: "255"
    description: Exit code of task 1.
run: |
  if [ "$QM_TASK_INDEX" = 0 ]; then
    i=1 n=0
    while [ "$i" -lt {{.P.trials}} ] && [ "$n" -lt 300 ]; do
      if [ -e "$QM_JOB_DIR/done-$i" ]; then i=$((i + 1)); else sleep 0.2; n=$((n + 1)); fi
    done
    sleep {{.P.long}}
  else
    sleep 1
  fi
  touch "$QM_JOB_DIR/done-$QM_TASK_INDEX"
  if [ "$QM_TASK_INDEX" = 1 ]; then exit {{.P.code}}; fi
`

func newArrayEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	b, err := slurm.New(slurm.Config{Policy: e.svc.Policy, Catalog: catalogWith(t, map[string]string{"trials.yaml": trialsTemplate}),
		Instance: e.inst, Workload: workload.Settings{DefaultTemplate: "sleeper"},
		Env: []string{"SLURM_CONF=" + e.conf}, Logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	e.backend, e.svc.Backend = b, b
	// The service places leases once it knows the nodes: the tasks share the node.
	if _, err := e.svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestArrayLeaseEndsWithItsLastTask: a sweep (a Slurm job array) is one lease however many tasks
// Slurm splits it into. Its running tasks are not cancelled as jobs no lease owns, the lease stays
// active while any task runs (not "back in the queue" while later tasks wait for the throttle),
// and it is released only when every task has ended, each having run to its end.
func TestArrayLeaseEndsWithItsLastTask(t *testing.T) {
	e := newArrayEnv(t)
	out := e.request("alice@acme.example", 2, "train", time.Hour, "trials", map[string]string{"trials": "3", "per": "1"})
	l := e.waitLease(out.Lease.ID, qm.Released)
	team, _ := e.svc.Policy.Team("vision")
	dir := filepath.Join(team.Storage.Path, ".quartermaster", l.ID.String())
	for i := 0; i < 3; i++ {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("done-%d", i))); err != nil {
			t.Errorf("task %d did not run to its end: %v", i, err)
		}
	}
	if !strings.Contains(l.Reason, "finished") {
		t.Errorf("%s ended with %q", l.ID, l.Reason)
	}
	if n := e.notes.Of(qm.NoticeFinished, l.ID); len(n) != 1 {
		t.Errorf("%d finished notices, want 1", len(n))
	}
	if n := e.notes.Of(qm.NoticeRequeued, l.ID); len(n) != 0 {
		t.Errorf("the owner was told %d times that the sweep is back in the queue", len(n))
	}
}

// TestArrayLeaseFailsWhenATaskFails: a task that fails while others run fails the lease once the
// array has ended, saying which task, and the other tasks run to their end.
func TestArrayLeaseFailsWhenATaskFails(t *testing.T) {
	e := newArrayEnv(t)
	out := e.request("alice@acme.example", 2, "train", time.Hour, "trials", map[string]string{"trials": "3", "per": "1", "code": "4"})
	l := e.waitLease(out.Lease.ID, qm.Failed)
	team, _ := e.svc.Policy.Team("vision")
	dir := filepath.Join(team.Storage.Path, ".quartermaster", l.ID.String())
	if _, err := os.Stat(filepath.Join(dir, "done-0")); err != nil {
		t.Errorf("task 0 did not run to its end: %v", err)
	}
	if !strings.Contains(l.Reason, "exit code 4") || !strings.Contains(l.Reason, "task 1") {
		t.Errorf("%s failed with %q, want task 1's exit code 4", l.ID, l.Reason)
	}
}

// TestSuspendedArrayPausesItsLease: a sweep whose tasks an administrator suspends (scontrol
// suspend on the array's id) keeps its GPUs and does not run: its lease is paused as a single
// job's is, its owner told once, and it runs again when resumed.
func TestSuspendedArrayPausesItsLease(t *testing.T) {
	e := newArrayEnv(t)
	// One task, which runs on (the others of a longer sweep end at once, and Slurm refuses to
	// suspend an ended task).
	out := e.request("alice@acme.example", 2, "train", time.Hour, "trials", map[string]string{"trials": "1", "per": "2", "long": "300"})
	ran := e.waitLease(out.Lease.ID, qm.Active)
	e.slurmCmd("scontrol", "suspend", ran.Ref)
	paused := e.waitFor(ran.ID, "to be paused", qm.Suspended)
	if paused.State != qm.Active || !strings.Contains(paused.Reason, "SUSPENDED") || !paused.ExpiresAt.Equal(ran.ExpiresAt) {
		t.Errorf("suspended sweep: %s %q, ends %s (was %s)", paused.State, paused.Reason, paused.ExpiresAt, ran.ExpiresAt)
	}
	e.pass(ran.ID)
	if n := e.notes.Of(qm.NoticeSuspended, ran.ID); len(n) != 1 {
		t.Errorf("told %d times that the sweep is paused; want once", len(n))
	}
	e.slurmCmd("scontrol", "resume", ran.Ref)
	e.waitFor(ran.ID, "to run again", func(l *qm.Lease) bool { return !qm.Suspended(l) })
}
