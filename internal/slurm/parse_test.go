package slurm_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/slurm"
	"github.com/acme/quartermaster/internal/workload"
)

// These tests need no cluster: Slurm's commands are stubbed. testdata/squeue-22.05.json is the
// output of squeue --json on the test cluster (Slurm 22.05.8, OpenAPI v0.0.38), with copies of
// its jobs set to the states a test cannot wait for (TIMEOUT, NODE_FAIL, …).

// stub answers Slurm commands from a table and records the calls.
type stub struct {
	mu    sync.Mutex
	calls [][]string
	stdin []string
	reply func(name string, args []string) (string, error)
}

func (s *stub) run(_ context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	s.mu.Lock()
	s.calls = append(s.calls, append([]string{name}, args...))
	s.stdin = append(s.stdin, string(stdin))
	s.mu.Unlock()
	out, err := s.reply(name, args)
	return []byte(out), err
}

func (s *stub) called(name string) [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]string
	for _, c := range s.calls {
		if c[0] == name {
			out = append(out, c)
		}
	}
	return out
}

func stubBackend(t testing.TB, s *stub) *slurm.Backend {
	t.Helper()
	b, err := slurm.New(slurm.Config{Policy: examplePolicy(t), Catalog: testCatalog(t), Workload: workload.Settings{DefaultTemplate: "sleeper", RunAs: "qmsvc"},
		StartWait: 50 * time.Millisecond, Poll: 10 * time.Millisecond, Run: s.run})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fixture(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile("testdata/squeue-22.05.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestJobsFromSqueue2205(t *testing.T) {
	data := fixture(t)
	b := stubBackend(t, &stub{reply: func(string, []string) (string, error) { return data, nil }})
	got, err := b.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	host := "vm"
	// Slurm's start and end times: for the running job its start and the end its limit sets,
	// which is no end yet but when its limit would end it.
	start, end := time.Unix(1796009600, 0).UTC(), time.Unix(1796011400, 0).UTC()
	want := []qm.Job{
		{Lease: 1, Ref: "310", State: qm.JobRunning, Node: host, TimeLimit: 30 * time.Minute, StartedAt: start, LimitEnd: end},
		{Lease: 2, Ref: "311", State: qm.JobFailed, Node: host, Reason: "exit code 3 (Slurm: FAILED, NonZeroExitCode)", TimeLimit: 90 * time.Minute,
			StartedAt: start, EndedAt: start, ExitCode: "3"},
		{Lease: 4, Ref: "313", State: qm.JobPending, Reason: "the GPUs it asks for are in use (Slurm: Resources)", TimeLimit: 30 * time.Minute},
		{Lease: 5, Ref: "314", State: qm.JobTimeout, Node: host, TimeLimit: 30 * time.Minute, StartedAt: start, EndedAt: end, ExitCode: "0"},
		{Lease: 6, Ref: "315", State: qm.JobCancelled, Node: host, TimeLimit: 30 * time.Minute, StartedAt: start, EndedAt: end, ExitCode: "signal 15"},
		{Lease: 7, Ref: "316", State: qm.JobFailed, Node: host, Reason: "its node failed (Slurm: NODE_FAIL)", TimeLimit: 30 * time.Minute,
			StartedAt: start, EndedAt: end, ExitCode: "0"},
		{Lease: 8, Ref: "317", State: qm.JobEnding, TimeLimit: 30 * time.Minute},
		{Lease: 9, Ref: "318", State: qm.JobCompleted, Node: host, Reason: "exit code 0", TimeLimit: 30 * time.Minute, StartedAt: start, EndedAt: end, ExitCode: "0"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("jobs\n got %+v\nwant %+v", got, want)
	}
}

// TestJobsFromNewerSqueue reads the shape later Slurm releases print: job_state a list, numbers
// as {set, infinite, number}, exit_code an object.
func TestJobsFromNewerSqueue(t *testing.T) {
	data := `{"jobs": [
	 {"job_id": 7, "comment": "qm:L-3", "job_state": ["RUNNING"], "state_reason": "None", "nodes": "gpu[01-02]",
	  "time_limit": {"set": true, "infinite": false, "number": 120}, "exit_code": {"status": ["SUCCESS"], "return_code": {"set": true, "infinite": false, "number": 0}}},
	 {"job_id": 8, "comment": "qm:L-4", "job_state": ["FAILED"], "state_reason": "NonZeroExitCode", "nodes": "gpu03",
	  "time_limit": {"set": false, "infinite": true, "number": 0}, "exit_code": {"status": ["ERROR"], "return_code": {"set": true, "infinite": false, "number": 2}},
	  "start_time": {"set": true, "infinite": false, "number": 1796009600}, "end_time": {"set": true, "infinite": false, "number": 1796009660}}
	], "errors": []}`
	b := stubBackend(t, &stub{reply: func(string, []string) (string, error) { return data, nil }})
	got, err := b.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []qm.Job{
		{Lease: 3, Ref: "7", State: qm.JobRunning, Node: "gpu01,gpu02", TimeLimit: 2 * time.Hour},
		{Lease: 4, Ref: "8", State: qm.JobFailed, Node: "gpu03", Reason: "exit code 2 (Slurm: FAILED, NonZeroExitCode)", ExitCode: "2",
			StartedAt: time.Unix(1796009600, 0).UTC(), EndedAt: time.Unix(1796009660, 0).UTC()},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("jobs\n got %+v\nwant %+v", got, want)
	}
}

func TestJobsErrors(t *testing.T) {
	for _, c := range []struct{ out, err, want string }{
		{out: "not json", want: "squeue --json"},
		{out: `{"errors": [{"error": "Unable to contact slurm controller"}], "jobs": []}`, want: "Unable to contact"},
		{err: "exit status 1: slurm_load_jobs error: Socket timed out", want: "Socket timed out"},
	} {
		b := stubBackend(t, &stub{reply: func(string, []string) (string, error) {
			if c.err != "" {
				return "", errors.New(c.err)
			}
			return c.out, nil
		}})
		if _, err := b.Jobs(context.Background()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Jobs with %q/%q: %v, want an error about %q", c.out, c.err, err, c.want)
		}
	}
}

// TestStartSubmits checks what Start hands sbatch, and how it reads Slurm's first decision.
func TestStartSubmits(t *testing.T) {
	for _, c := range []struct {
		name, show string
		want       qm.Started
	}{
		{"running", "JobId=55 JobName=x JobState=RUNNING Reason=None NodeList=gpu07 Comment=qm:L-9",
			qm.Started{State: qm.Active, Ref: "55", Node: "gpu07", Connect: "ssh -p PORT qmsvc@gpu07", PicksGPUs: true}},
		{"pending", "JobId=55 JobState=PENDING Reason=Resources NodeList= Comment=qm:L-9",
			qm.Started{State: qm.Queued, Ref: "55", Connect: "ssh -p PORT qmsvc@" + qm.NodePlaceholder, Reason: "the GPUs it asks for are in use (Slurm: Resources)", PicksGPUs: true}},
		{"ended at once", "JobId=55 JobState=FAILED Reason=NonZeroExitCode NodeList=gpu07",
			qm.Started{State: qm.Provisioning, Ref: "55", Connect: "ssh -p PORT qmsvc@" + qm.NodePlaceholder, PicksGPUs: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &stub{reply: func(name string, args []string) (string, error) {
				switch name {
				case "sbatch":
					return "55\n", nil
				case "scontrol":
					return c.show + "\n", nil
				}
				return "", errors.New("unexpected " + name)
			}}
			b := stubBackend(t, s)
			l := &qm.Lease{ID: 9, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 2, Duration: 90 * time.Minute}
			st, err := b.Start(context.Background(), l)
			if err != nil {
				t.Fatal(err)
			}
			port := st.Connect[strings.Index(st.Connect, "-p ")+3 : strings.Index(st.Connect, " qmsvc")]
			c.want.Connect = strings.Replace(c.want.Connect, "PORT", port, 1)
			if !reflect.DeepEqual(st, c.want) {
				t.Errorf("started %+v, want %+v", st, c.want)
			}
			sb := s.called("sbatch")
			if len(sb) != 1 {
				t.Fatalf("sbatch ran %d times", len(sb))
			}
			args := strings.Join(sb[0], " ")
			if !strings.Contains(args, "--parsable") || !strings.Contains(args, "--comment=qm:L-9") || !strings.Contains(args, "--chdir=") {
				t.Errorf("sbatch %s", args)
			}
			script := s.stdin[0]
			for _, w := range []string{"--partition=train\n", "--gres=gpu:h100:2\n", "--time=01:30:00\n", "--job-name=qm-l-9-sleeper\n", "exec sleep 600"} {
				if !strings.Contains(script, w) {
					t.Errorf("script lacks %q:\n%s", w, script)
				}
			}
			if strings.Contains(script, "--account") {
				t.Errorf("script sets an account with accounting off:\n%s", script)
			}
		})
	}
}

func TestStartRefuses(t *testing.T) {
	s := &stub{reply: func(name string, _ []string) (string, error) {
		return "", errors.New("exit status 1: sbatch: error: invalid partition specified: train")
	}}
	b := stubBackend(t, s)
	l := &qm.Lease{ID: 9, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 2, Duration: time.Hour}
	if _, err := b.Start(context.Background(), l); err == nil || !strings.Contains(err.Error(), "invalid partition") {
		t.Fatalf("start: %v", err)
	}
	l.Template, l.Params = "nap", map[string]string{"second": "3"}
	if _, err := b.Start(context.Background(), l); err == nil || !strings.Contains(err.Error(), "did you mean seconds") {
		t.Fatalf("start with a bad parameter: %v", err)
	}
	if n := len(s.called("sbatch")); n != 1 {
		t.Errorf("sbatch ran %d times; a lease that does not render must not be submitted", n)
	}
}

func TestStopAndCancel(t *testing.T) {
	data := fixture(t)
	s := &stub{reply: func(name string, args []string) (string, error) {
		switch {
		case name == "squeue":
			return data, nil
		case name == "scancel" && args[0] == "311":
			return "", errors.New("exit status 1: scancel: error: Kill job error on job id 311: Job/step already completing or completed")
		}
		return "", nil
	}}
	b := stubBackend(t, s)
	ctx := context.Background()
	if err := b.Stop(ctx, &qm.Lease{ID: 2, Ref: "311"}); err != nil {
		t.Errorf("stopping a finished job: %v", err)
	}
	// A lease that never recorded its job: cancelled by its comment.
	if err := b.Stop(ctx, &qm.Lease{ID: 1}); err != nil {
		t.Fatal(err)
	}
	if err := b.Cancel(ctx, qm.Job{Ref: "1; rm -rf /"}); err == nil {
		t.Error("cancel took a job id that is not a number")
	}
	got := s.called("scancel")
	if len(got) != 2 || got[1][1] != "310" {
		t.Errorf("scancel calls %v", got)
	}
	if err := b.SetTimeLimit(ctx, qm.Job{Ref: "310"}, 90*time.Minute+time.Second); err != nil {
		t.Fatal(err)
	}
	if c := s.called("scontrol"); len(c) != 1 || strings.Join(c[0], " ") != "scontrol update JobId=310 TimeLimit=91" {
		t.Errorf("scontrol calls %v", c)
	}
}
