package slurm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/slurm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// TestRequeuedJobSaysWhenItMayStart: after an administrator's scontrol requeue, Slurm holds the
// job back (BeginTime) for a while; the owner reads until when, in the policy's time zone, and
// that it starts then if GPUs are free, from squeue and from scontrol alike. A job held by its
// start time without a requeue says when that time comes.
func TestRequeuedJobSaysWhenItMayStart(t *testing.T) {
	p, err := policy.LoadFile("../../commands/testdata/norules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eligible := time.Date(2026, 12, 6, 5, 32, 0, 0, time.UTC) // 11:02 in Kolkata
	var restarts int
	run := func(_ context.Context, _ []byte, name string, args ...string) ([]byte, error) {
		switch name {
		case "squeue":
			return []byte(fmt.Sprintf(`{"jobs": [{"job_id": 41, "comment": "qm:L-7", "job_state": ["PENDING"], "state_reason": "BeginTime",
				"eligible_time": %d, "start_time": %d, "restart_cnt": %d, "partition": "a100"}], "errors": []}`, eligible.Unix(), eligible.Unix(), restarts)), nil
		case "scontrol":
			at := eligible.In(time.Local).Format("2006-01-02T15:04:05")
			return []byte(fmt.Sprintf("JobId=41 JobName=qm JobState=PENDING Reason=BeginTime Dependency=(null) Requeue=1 Restarts=%d BatchFlag=1 "+
				"SubmitTime=%s EligibleTime=%s StartTime=%s EndTime=Unknown Partition=a100 NodeList=(null) TimeLimit=02:00:00 Comment=qm:L-7\n", restarts, at, at, at)), nil
		}
		return nil, nil
	}
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	b, err := slurm.New(slurm.Config{Policy: p, Catalog: cat, Instance: "qm", Run: run, Workload: workload.Settings{DefaultTemplate: "sleeper"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		restarts int
		want     string
	}{
		{1, "Slurm holds a requeued job back until Sun 6 Dec 11:02 IST; it starts then if GPUs are free"},
		{0, "Slurm holds it back until Sun 6 Dec 11:02 IST; it starts then if GPUs are free"},
	} {
		restarts = c.restarts
		jobs, err := b.Jobs(context.Background())
		if err != nil || len(jobs) != 1 {
			t.Fatalf("squeue: %v %+v", err, jobs)
		}
		if !strings.Contains(jobs[0].Reason, c.want) || !strings.Contains(jobs[0].Reason, "BeginTime") {
			t.Errorf("restarts %d, squeue: reason %q; want it to say %q", c.restarts, jobs[0].Reason, c.want)
		}
		j, err := b.Job(context.Background(), "41")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(j.Reason, c.want) || !strings.Contains(j.Reason, "BeginTime") {
			t.Errorf("restarts %d, scontrol: reason %q; want it to say %q", c.restarts, j.Reason, c.want)
		}
	}
}
