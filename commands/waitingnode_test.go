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
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/slurm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// TestTheStatusOfAWorkspaceTheSchedulerCannotPlaceNamesNoNodeItRunsOn: the service placed a
// workspace on a node (mig-1), and Kubernetes cannot schedule its pod there. While nothing runs,
// /gpu status and /gpu list do not show the node as where it is ("Node: mig-1"): they say it
// waits, and for what.
func TestTheStatusOfAWorkspaceTheSchedulerCannotPlaceNamesNoNodeItRunsOn(t *testing.T) {
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", append(borealisNodes(), borealisClaims()...)...)
	k.reconcile()
	const pim, ns = "pim@borealis.example", "qm-speech"
	id := leaseIn(t, k.say(pim, "/gpu request 1 slice 1h").Text)
	l, _ := k.svc.Get(context.Background(), id)
	if l.Node == "" {
		t.Fatalf("%s was not placed by the service; the test needs a placed lease", id)
	}
	job := l.Ref[strings.LastIndex(l.Ref, "/")+1:]
	k.addPod(ns, job, job+"-a", podUnschedulable("0/3 nodes are available: 1 Insufficient nvidia.com/mig-2g.20gb."))
	k.reconcile()
	k.notices(pim)

	r := k.say(pim, "/gpu status "+id.String())
	for _, sec := range r.Sections {
		for _, f := range sec.Fields {
			if f.Label == "Node" {
				t.Errorf("status of a lease whose pod waits shows Node: %q as where it is", f.Value)
			}
		}
	}
	st := r.PlainText()
	for _, want := range []string{"queued", "Insufficient nvidia.com/mig-2g.20gb"} {
		if !strings.Contains(st, want) {
			t.Errorf("status %q\nwant it to say %q", st, want)
		}
	}
	if !strings.Contains(st, "Waiting") && !strings.Contains(st, "waits") {
		t.Errorf("status %q does not say that it waits", st)
	}
	list := k.say(pim, "/gpu list").PlainText()
	if strings.Contains(list, "Node: ") || !strings.Contains(list, "Insufficient nvidia.com/mig-2g.20gb") {
		t.Errorf("list %q shows a node as where the waiting lease is, or not what it waits for", list)
	}
}

// slurmWaiting is the whole bot on the Slurm backend with a stubbed Slurm (the backend's Runner):
// one duo node, gpu07, whose jobs never start: every job of the service waits in Slurm's queue
// with the reason reason.
func slurmWaiting(t *testing.T, reason string) *harness {
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
			return []byte("NodeName=gpu07 Gres=gpu:a10:2 GresUsed=gpu:a10:0(IDX:N/A) State=IDLE Partitions=duo\n"), nil
		case name == "sbatch":
			for _, a := range args {
				if c, ok := strings.CutPrefix(a, "--comment="); ok {
					comments = append(comments, c)
				}
			}
			return []byte(strconv.Itoa(100 + len(comments))), nil
		case name == "scontrol" && len(args) > 3 && args[1] == "job":
			n, _ := strconv.Atoi(args[3])
			if n <= 100 || n > 100+len(comments) {
				return nil, errors.New("Invalid job id specified")
			}
			return []byte(fmt.Sprintf("JobId=%d JobState=PENDING Reason=%s Comment=%s Partition=duo NodeList=(null) TimeLimit=02:00:00\n", n, reason, comments[n-101])), nil
		case name == "squeue" && len(args) > 0 && args[0] == "--json":
			var jobs []string
			for i, c := range comments {
				short, _, _ := strings.Cut(reason, ",")
				jobs = append(jobs, fmt.Sprintf(`{"job_id": %d, "comment": %q, "job_state": "PENDING", "state_reason": %q, "state_description": %q, "nodes": "", "partition": "duo"}`,
					101+i, c, short, strings.ReplaceAll(reason, "_", " ")))
			}
			return []byte(`{"jobs": [` + strings.Join(jobs, ",") + `], "errors": []}`), nil
		case name == "squeue":
			return nil, nil // none of the service's jobs runs
		}
		return nil, nil
	}
	return slurmHarness(t, p, cat, run)
}

// slurmHarness is the whole bot on the Slurm backend with policy p, whose Slurm commands run
// answers.
func slurmHarness(t *testing.T, p *policy.Policy, cat *templates.Catalog, run slurm.Runner) *harness {
	t.Helper()
	b, err := slurm.New(slurm.Config{Policy: p, Catalog: cat, Instance: "qm", Run: run, StartWait: time.Millisecond, Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), "sqlite::memory:", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &harness{t: t, clock: sim.NewClock(start)}
	h.svc = &qm.Service{Policy: p, Store: st, Clock: h.clock, Backend: b, Directory: p}
	h.bot = &Bot{Svc: h.svc}
	AddTemplates(h.bot, cat, workload.Settings{})
	h.svc.Notifier = &Notices{Bot: h.bot, Sender: bot.SenderFunc(func(_ context.Context, r bot.Reply) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.sent = append(h.sent, r)
		return nil
	})}
	if _, err := h.svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestTheStatusOfASlurmJobThatCannotStartNamesNoNodeItRunsOn: the same on Slurm. The service
// placed the workspace on gpu07 (--nodelist), and Slurm keeps its job pending there: status
// says it waits, and why, not that gpu07 is where it is.
func TestTheStatusOfASlurmJobThatCannotStartNamesNoNodeItRunsOn(t *testing.T) {
	h := slurmWaiting(t, "ReqNodeNotAvail,_UnavailableNodes:gpu07")
	const kim = "kim@orbit.example"
	id := leaseIn(t, h.say(kim, "/gpu request 1 duo 2h").Text)
	if _, err := h.svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	l, _ := h.svc.Get(context.Background(), id)
	if l.Node != "gpu07" || l.State != qm.Queued {
		t.Fatalf("%s is %s on %q; the test needs it placed on gpu07 and waiting", id, l.State, l.Node)
	}
	r := h.say(kim, "/gpu status "+id.String())
	for _, sec := range r.Sections {
		for _, f := range sec.Fields {
			if f.Label == "Node" {
				t.Errorf("status of a lease whose job waits shows Node: %q as where it is", f.Value)
			}
		}
	}
	st := r.PlainText()
	for _, want := range []string{"queued", "ReqNodeNotAvail", "Waiting: to start on gpu07"} {
		if !strings.Contains(st, want) {
			t.Errorf("status %q\nwant it to say %q", st, want)
		}
	}
	if list := h.say(kim, "/gpu list").PlainText(); strings.Contains(list, "Node: ") {
		t.Errorf("list %q shows a node as where the waiting lease is", list)
	}
}
