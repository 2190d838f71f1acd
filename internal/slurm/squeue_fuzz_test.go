package slurm_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/slurm"
)

// A job without a time limit reads as one without a limit (0) in either shape: Slurm 22.05
// prints INFINITE as the number 4294967295, the later shape as {"infinite": true}. A limit too
// large to be a duration is no limit either, never a negative one.
func TestSqueueInfiniteTimeLimitIsNoLimit(t *testing.T) {
	for _, tl := range []string{`4294967295`, `{"set": true, "infinite": true, "number": 0}`, `9223372036854775807`, `153722868`, `-5`, `0`} {
		jobs, err := slurm.ParseSqueue([]byte(`{"jobs": [{"job_id": 7, "job_state": "RUNNING", "time_limit": ` + tl + `}]}`))
		if err != nil || len(jobs) != 1 {
			t.Fatalf("time_limit %s: %v, %d jobs", tl, err, len(jobs))
		}
		if got := jobs[0].TimeLimit; got != 0 {
			t.Errorf("time_limit %s reads as %v; want no limit", tl, got)
		}
	}
	jobs, err := slurm.ParseSqueue([]byte(`{"jobs": [{"job_id": 7, "time_limit": {"set": true, "number": 90}}, {"job_id": 8, "time_limit": 153722867}]}`))
	if err != nil || jobs[0].TimeLimit != 90*time.Minute || jobs[1].TimeLimit != 153722867*time.Minute {
		t.Errorf("time limits of 90 and 153722867 minutes: %+v, %v", jobs, err)
	}
}

// FuzzParseSqueue: whatever squeue --json prints (a job's name, comment and output file are
// anyone's to choose), it reads as jobs or a short error, never a panic; a
// time limit is never negative, an output file is an absolute path or none, and a job id is a
// number.
func FuzzParseSqueue(f *testing.F) {
	f.Add([]byte(`{"jobs": [{"job_id": 310, "name": "n", "comment": "qm:L-1", "job_state": "RUNNING", "time_limit": 30, "exit_code": 0,
	 "start_time": 1796009597, "end_time": 1796011400, "standard_output": "/home/%u/%x-%j.%A_%a.%N.%%", "user_name": "u", "nodes": "gpu[01-02]",
	 "array_job_id": 0, "gres_detail": ["gpu:l40s:1(IDX:8)"]}], "errors": []}`))
	f.Add([]byte(`{"jobs": [{"job_id": {"set": true, "number": 5}, "job_state": ["PENDING", "REQUEUED"], "time_limit": {"set": true, "infinite": false, "number": 60},
	 "exit_code": {"status": ["SIGNALED"], "return_code": {"set": true, "number": 0}, "signal": {"id": {"set": true, "number": 9}, "name": "KILL"}},
	 "standard_output": "/o/%A_%a", "array_job_id": {"set": true, "number": 4}, "array_task_id": {"set": true, "number": 2}}]}`))
	f.Add([]byte(`{"errors": [{"error": "Invalid user", "error_number": 2}], "jobs": []}`))
	f.Add([]byte(`{"jobs": [{"time_limit": 4294967295, "exit_code": 33024, "standard_output": "rel/%q", "start_time": -1}, null]}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, err := slurm.ParseSqueue(data)
		if err != nil {
			if msg := err.Error(); msg == "" || len(msg) > 1000 {
				t.Fatalf("refused in %q", msg)
			}
			return
		}
		for _, j := range jobs {
			if j.TimeLimit < 0 {
				t.Fatalf("job %s has a time limit of %v", j.JobID, j.TimeLimit)
			}
			if j.StdOut != "" && !strings.HasPrefix(j.StdOut, "/") {
				t.Fatalf("job %s writes to %q", j.JobID, j.StdOut)
			}
			if j.JobID == "" || strings.Trim(j.JobID, "-0123456789") != "" {
				t.Fatalf("job id %q", j.JobID)
			}
		}
	})
}

// A host list ending at the largest number there is names that one host and ends, in squeue's
// node column as anywhere Slurm writes a host list.
func TestHostListEndingAtTheLargestNumberEnds(t *testing.T) {
	for list, want := range map[string]string{
		"gpu[9223372036854775807]":                     "gpu9223372036854775807",
		"gpu[9223372036854775806-9223372036854775807]": "gpu9223372036854775806 gpu9223372036854775807",
	} {
		own := slurm.ParseOwnJobs([]byte(list+"|gres/gpu:h100=1|qm:L-1\n"), func(c string) bool { return strings.HasPrefix(c, "qm:") })
		if len(own) != 1 || strings.Join(own[0].Nodes, " ") != want {
			t.Errorf("%s: %+v, want nodes %s", list, own, want)
		}
	}
}
