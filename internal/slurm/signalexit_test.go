package slurm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// A job whose workload was killed by a signal (exit_code 9 in squeue --json of Slurm 22.05 is a
// wait status: signal 9; later releases name the signal) is reported as killed by it, not as
// "exit code signal 9".
func TestJobKilledBySignalSaysSo(t *testing.T) {
	data := `{"jobs": [
	 {"job_id": 19, "comment": "qm:L-3", "job_state": "FAILED", "state_reason": "JobLaunchFailure", "nodes": "vm", "exit_code": 9,
	  "start_time": 1796009600, "end_time": 1796009601},
	 {"job_id": 20, "comment": "qm:L-4", "job_state": ["FAILED"], "state_reason": "NonZeroExitCode", "nodes": "gpu03",
	  "exit_code": {"status": ["SIGNALED"], "return_code": {"set": true, "infinite": false, "number": 0}, "signal": {"id": {"set": true, "infinite": false, "number": 9}, "name": "SIGKILL"}},
	  "start_time": {"set": true, "infinite": false, "number": 1796009600}, "end_time": {"set": true, "infinite": false, "number": 1796009660}}
	], "errors": []}`
	b := stubBackend(t, &stub{reply: func(string, []string) (string, error) { return data, nil }})
	jobs, err := b.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"19": "killed by signal 9 (Slurm: FAILED, JobLaunchFailure)", "20": "killed by signal SIGKILL (Slurm: FAILED, NonZeroExitCode)"}
	for _, j := range jobs {
		if j.State != qm.JobFailed || j.Reason != want[j.Ref] || strings.Contains(j.Reason, "exit code") {
			t.Errorf("job %s: %s, %q; want failed, %q", j.Ref, j.State, j.Reason, want[j.Ref])
		}
	}
	if len(jobs) != 2 {
		t.Errorf("%d jobs, want 2", len(jobs))
	}
}
