package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/templates"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// slurmRunning is the whole bot on the Slurm backend with a stubbed Slurm whose one duo node,
// gpu07, runs every job of the service as soon as it is submitted.
func slurmRunning(t *testing.T) *harness {
	t.Helper()
	text, err := os.ReadFile("testdata/orbit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "orbit.yaml")
	text = []byte(strings.ReplaceAll(string(text), "/data/robotics", filepath.Join(dir, "robotics")))
	if err := os.MkdirAll(filepath.Join(dir, "robotics"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, text, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := policy.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var comments []string // by job id - 101
	run := func(_ context.Context, _ []byte, name string, args ...string) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case name == "sinfo":
			return nil, errors.New("sinfo: no JSON plugin")
		case name == "scontrol" && len(args) > 1 && args[0] == "show" && args[1] == "node":
			return []byte(fmt.Sprintf("NodeName=gpu07 Gres=gpu:a10:2 GresUsed=gpu:a10:%d(IDX:N/A) State=IDLE Partitions=duo\n", min(2, len(comments)))), nil
		case name == "sbatch":
			for _, a := range args {
				if c, ok := strings.CutPrefix(a, "--comment="); ok {
					comments = append(comments, c)
				}
			}
			return []byte(strconv.Itoa(100 + len(comments))), nil
		case name == "scontrol" && len(args) > 3 && args[1] == "job":
			n, _ := strconv.Atoi(args[len(args)-1])
			if n <= 100 || n > 100+len(comments) {
				return nil, errors.New("Invalid job id specified")
			}
			return []byte(fmt.Sprintf("JobId=%d JobState=RUNNING Reason=None Comment=%s Partition=duo NodeList=gpu07 TimeLimit=14:00:00\n", n, comments[n-101])), nil
		case name == "squeue" && len(args) > 0 && args[0] == "--json":
			var jobs []string
			for i, c := range comments {
				jobs = append(jobs, fmt.Sprintf(`{"job_id": %d, "comment": %q, "job_state": "RUNNING", "state_reason": "None", "nodes": "gpu07", "partition": "duo"}`, 101+i, c))
			}
			return []byte(`{"jobs": [` + strings.Join(jobs, ",") + `], "errors": []}`), nil
		}
		return nil, nil
	}
	return slurmHarness(t, p, cat, run)
}

// After a budget owner approves a request that the scheduler starts at once, the approver and
// the requester read the same state of the lease, the one it is in once the scheduler answered:
// the requester is not told it is being started while the approver reads that it is active, and
// gets one message of the approval, with how long it runs, not a second one right after it.
func TestApproverAndRequesterReadTheSameStateAfterAnApproval(t *testing.T) {
	h := slurmRunning(t)
	const kim, ria = "kim@orbit.example", "ria@orbit.example"
	asked := h.say(kim, "/gpu request 1 duo for 14h").Text
	id := leaseIn(t, asked)
	if !strings.Contains(asked, "will decide") {
		t.Fatalf("%q\nthe test needs a request that waits for approval", asked)
	}
	h.notices(kim)
	decided := h.say(ria, "/gpu approve "+id.String()).Text
	l, err := h.svc.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(decided, "it is now "+string(l.State)) {
		t.Errorf("the approver reads %q; the lease is %s", decided, l.State)
	}
	told := h.notices(kim)
	var texts []string
	for _, r := range told {
		texts = append(texts, r.PlainText())
	}
	all := strings.Join(texts, "\n")
	if len(told) != 1 {
		t.Fatalf("the requester got %d messages of the approval, want one:\n%s", len(told), all)
	}
	if l.State != "active" {
		t.Fatalf("the approved lease is %s; the test needs one the scheduler runs at once", l.State)
	}
	if strings.Contains(all, "being started") || !strings.Contains(all, "is active") {
		t.Errorf("the approver reads %q, and the requester, of the same active lease:\n%s", decided, all)
	}
	if !strings.Contains(all, "Approved by "+ria) && !strings.Contains(all, "approved by "+ria) {
		t.Errorf("the requester is not told who approved:\n%s", all)
	}
}
