package slurm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestSuspendedArrayIsSuspended: a job array whose tasks that hold GPUs are all suspended
// (scontrol suspend on the array, a SIGSTOP) is a suspended job, as a single job is, so its lease
// is paused; one task still running keeps it running.
func TestSuspendedArrayIsSuspended(t *testing.T) {
	task := func(id, index int, state string) string {
		return fmt.Sprintf(`{"job_id": %d, "comment": "qm:L-3", "job_state": %q, "state_reason": "None", "time_limit": 60, "nodes": "vm",
			"start_time": 1796009600, "array_job_id": 40, "array_task_id": %d}`, id, state, index)
	}
	for _, c := range []struct {
		name      string
		tasks     []string
		suspended bool
	}{
		{"every task suspended", []string{task(41, 0, "SUSPENDED"), task(40, 1, "SUSPENDED")}, true},
		{"stopped and suspended", []string{task(41, 0, "STOPPED"), task(40, 1, "SUSPENDED")}, true},
		{"one task runs", []string{task(41, 0, "SUSPENDED"), task(40, 1, "RUNNING")}, false},
		{"suspended, one task waiting", []string{task(41, 0, "SUSPENDED"),
			`{"job_id": 40, "comment": "qm:L-3", "job_state": "PENDING", "state_reason": "JobArrayTaskLimit", "time_limit": 60, "array_job_id": 40, "array_task_id": 1}`}, true},
	} {
		data := `{"jobs": [` + strings.Join(c.tasks, ", ") + `]}`
		b := stubBackend(t, &stub{reply: func(string, []string) (string, error) { return data, nil }})
		jobs, err := b.Jobs(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 1 {
			t.Fatalf("%s: %d jobs, want the array as one: %+v", c.name, len(jobs), jobs)
		}
		j := jobs[0]
		if j.Ref != "40" || j.Suspended != c.suspended || (c.suspended && !strings.Contains(j.Reason, "Slurm: S")) {
			t.Errorf("%s: job %s %s suspended=%v %q; want job 40 suspended=%v, in Slurm's words", c.name, j.Ref, j.State, j.Suspended, j.Reason, c.suspended)
		}
	}
}
