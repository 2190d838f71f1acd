package slurm_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
)

// FuzzScontrolJob: whatever scontrol show job -d -o prints (a job's name, comment and reason are
// anyone's to choose, and Slurm's versions print it differently), Job reads it as a job or a
// short error, never a panic; a time limit is never negative, and GPUs are distinct and not
// negative.
func FuzzScontrolJob(f *testing.F) {
	for _, s := range []string{
		"JobId=4242 JobName=qm JobState=RUNNING Reason=None NodeList=gpu01 StartTime=2026-11-30T09:00:00 EndTime=2026-11-30T11:00:00",
		"JobId=310 JobName=my job UserId=u(1000) Comment=qm:L-1 JobState=PENDING Reason=ReqNodeNotAvail,_UnavailableNodes:gpu01 Partition=gpu Account=(null) TimeLimit=1-02:03:04 ExitCode=0:0 Restarts=2 EligibleTime=2026-11-30T09:00:00",
		"JobId=311 JobState=RUNNING NodeList=gpu5 TimeLimit=UNLIMITED ExitCode=127:0 TresPerNode=gres:gpu:h100:3\n   Nodes=gpu5 CPU_IDs=0-3 Mem=0 GRES=gpu:h100:3(IDX:0,2-3)",
		"JobId=12 ArrayJobId=12 ArrayTaskId=1 JobState=COMPLETED ExitCode=0:9 StartTime=Unknown EndTime=None\nJobId=13 ArrayJobId=12 ArrayTaskId=2-9 JobState=PENDING Reason=Resources",
		"JobId=1 TimeLimit=99999999999-00:00:00", "JobId=1 TimeLimit=00:-5:00", "JobId=1 TimeLimit=1-2:3", "JobId=1 ExitCode=:", "Reason=x", "",
	} {
		f.Add(s)
	}
	var out atomic.Value
	out.Store("")
	b := stubBackend(f, &stub{reply: func(name string, args []string) (string, error) {
		if name == "scontrol" {
			return out.Load().(string), nil
		}
		return `{"jobs": []}`, nil
	}})
	f.Fuzz(func(t *testing.T, text string) {
		out.Store(text)
		j, err := b.Job(context.Background(), "4242")
		if err != nil {
			if msg := err.Error(); msg == "" || len(msg) > 1000 {
				t.Fatalf("refused in %q", msg)
			}
			return
		}
		if j.TimeLimit < 0 {
			t.Fatalf("%q read as a time limit of %v", text, j.TimeLimit)
		}
		seen := map[int]bool{}
		for _, g := range j.GPUIndex {
			if g < 0 || seen[g] {
				t.Fatalf("%q read as GPUs %v", text, j.GPUIndex)
			}
			seen[g] = true
		}
		if strings.Contains(j.Ref, "\n") {
			t.Fatalf("ref %q", j.Ref)
		}
	})
}
