package slurm_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
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
			// What scontrol printed is quoted clipped to 300 bytes: at most four characters each
			// once quoted (\xfd), so an error stays under 1,500, and whole UTF-8.
			if msg := err.Error(); msg == "" || len(msg) > 1500 || !utf8.ValidString(msg) {
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

// A TimeLimit too large to be a duration (106752 days and more) reads as no limit (0), as squeue's
// does, never as a negative one; a negative field is no limit either.
func TestScontrolTimeLimitTooLargeIsNoLimit(t *testing.T) {
	for limit, want := range map[string]time.Duration{
		"106751-23:47:16":   106751*24*time.Hour + 23*time.Hour + 47*time.Minute + 16*time.Second,
		"106752-00:00:00":   0,
		"99999999999-0:0:0": 0,
		"0-2562047:0:0":     2562047 * time.Hour,
		"0-2562048:0:0":     0,
		"0:0:9223372036":    9223372036 * time.Second,
		"0:0:9223372037":    0,
		"1:-5:0":            0,
		"UNLIMITED":         0,
		"1-02:03:04":        26*time.Hour + 3*time.Minute + 4*time.Second,
	} {
		b := stubBackend(t, &stub{reply: func(name string, args []string) (string, error) {
			if name == "scontrol" {
				return "JobId=7 JobState=PENDING Reason=Priority TimeLimit=" + limit, nil
			}
			return `{"jobs": []}`, nil
		}})
		j, err := b.Job(context.Background(), "7")
		if err != nil || j.TimeLimit != want {
			t.Errorf("TimeLimit=%s reads as %v (%v); want %v", limit, j.TimeLimit, err, want)
		}
	}
}
