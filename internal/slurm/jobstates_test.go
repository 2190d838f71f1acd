package slurm

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// TestEveryJobState: what each of Slurm's job states becomes for the service. A suspended or
// stopped job runs on, paused, holding its GPUs; a held one waits, saying who holds it in words;
// the end states end with Slurm's state in the reason.
func TestEveryJobState(t *testing.T) {
	for _, c := range []struct {
		state, reason string
		want          qm.JobState
		suspended     bool
		says          string // in the job's reason
	}{
		{"PENDING", "Resources", qm.JobPending, false, "the GPUs it asks for are in use (Slurm: Resources)"},
		{"PENDING", "JobHeldAdmin", qm.JobPending, false, "an administrator holds it; it waits until they release it (Slurm: JobHeldAdmin)"},
		{"PENDING", "JobHeldUser", qm.JobPending, false, "it is held (scontrol hold or requeuehold); it waits until it is released (Slurm: JobHeldUser)"},
		{"REQUEUE_HOLD", "JobHeldAdmin", qm.JobPending, false, "Slurm: JobHeldAdmin"},
		{"REQUEUED", "BeginTime", qm.JobPending, false, "Slurm: BeginTime"},
		{"RUNNING", "None", qm.JobRunning, false, ""},
		{"CONFIGURING", "None", qm.JobRunning, false, ""},
		{"SUSPENDED", "None", qm.JobRunning, true, "Slurm: SUSPENDED"},
		{"SUSPENDED", "Preempted", qm.JobRunning, true, "Slurm: SUSPENDED, Preempted"},
		{"STOPPED", "None", qm.JobRunning, true, "Slurm: STOPPED"},
		{"COMPLETING", "None", qm.JobEnding, false, ""},
		{"COMPLETED", "None", qm.JobCompleted, false, "exit code 0"},
		{"CANCELLED", "None", qm.JobCancelled, false, ""},
		{"FAILED", "NonZeroExitCode", qm.JobFailed, false, "exit code 0 (Slurm: FAILED, NonZeroExitCode)"},
		{"TIMEOUT", "TimeLimit", qm.JobTimeout, false, ""},
		{"DEADLINE", "None", qm.JobTimeout, false, "its deadline passed (Slurm: DEADLINE)"},
		{"NODE_FAIL", "NodeDown", qm.JobFailed, false, "its node failed (Slurm: NODE_FAIL, NodeDown)"},
		{"BOOT_FAIL", "None", qm.JobFailed, false, "its node did not boot (Slurm: BOOT_FAIL)"},
		{"PREEMPTED", "None", qm.JobFailed, false, "a higher-priority job preempted it (Slurm: PREEMPTED)"},
		{"OUT_OF_MEMORY", "OutOfMemory", qm.JobFailed, false, "it ran out of memory, exit code 0 (Slurm: OUT_OF_MEMORY, OutOfMemory)"},
	} {
		j := SqueueJob{JobID: "7", State: c.state, Reason: c.reason, Nodes: "vm", ExitCode: "0", TimeLimit: time.Hour}.job(1)
		if j.State != c.want || j.Suspended != c.suspended || !strings.Contains(j.Reason, c.says) || (c.says == "" && j.Reason != "") {
			t.Errorf("%s, %s: %s suspended=%v %q; want %s suspended=%v %q", c.state, c.reason, j.State, j.Suspended, j.Reason, c.want, c.suspended, c.says)
		}
	}
}

// TestStoppedInTheNewerShape: later Slurm releases print a SIGSTOPped job as RUNNING with a
// STOPPED flag; it is stopped all the same.
func TestStoppedInTheNewerShape(t *testing.T) {
	jobs, err := ParseSqueue([]byte(`{"jobs": [
	 {"job_id": 7, "comment": "qm:L-3", "job_state": ["RUNNING", "STOPPED"], "state_reason": "None", "nodes": "gpu01"},
	 {"job_id": 8, "comment": "qm:L-4", "job_state": ["SUSPENDED"], "state_reason": "None", "nodes": "gpu01"},
	 {"job_id": 9, "comment": "qm:L-5", "job_state": ["PENDING", "REQUEUED"], "state_reason": "BeginTime"}
	], "errors": []}`))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		state     qm.JobState
		suspended bool
	}{{qm.JobRunning, true}, {qm.JobRunning, true}, {qm.JobPending, false}} {
		if j := jobs[i].job(1); j.State != want.state || j.Suspended != want.suspended {
			t.Errorf("job %s (%s): %s suspended=%v; want %s suspended=%v", jobs[i].JobID, jobs[i].State, j.State, j.Suspended, want.state, want.suspended)
		}
	}
}
