package qm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// exampleNodes is the example policy's cluster as a scheduler would report it: 16 interactive
// and 16 train GPUs, so the shared classes may hold 15 % of 32 = 4 GPUs together.
func exampleNodes() []qm.Node {
	var ns []qm.Node
	for _, n := range []string{"l40s-a", "l40s-b", "l40s-c", "l40s-d"} {
		ns = append(ns, qm.Node{Name: n, Class: "interactive", GPUs: 4})
	}
	for _, n := range []string{"h100-a", "h100-b"} {
		ns = append(ns, qm.Node{Name: n, Class: "train", GPUs: 8})
	}
	return ns
}

// On a backend whose scheduler places the jobs (Slurm, Kubernetes), the shared-capacity cap
// holds once the inventory comes from the scheduler: the reconcile pass refreshes it.
func TestSharedCapHoldsOnASchedulerBackend(t *testing.T) {
	svc, f, _, _ := schedService(t, qm.Started{State: qm.Active})
	f.nodes = exampleNodes()
	if _, err := svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.refreshes != 1 {
		t.Fatalf("the reconcile pass refreshed the inventory %d times, want 1", f.refreshes)
	}
	for i := 0; i < 4; i++ {
		if l := mustRequest(t, svc, "alice@acme.example", 1, "interactive"); l.State != qm.Active {
			t.Fatalf("interactive GPU %d: %s (%s)", i+1, l.State, l.Reason)
		}
	}
	l := mustRequest(t, svc, "lee@acme.example", 1, "interactive")
	if l.State != qm.Queued || !strings.Contains(l.Reason, "interactive may hold 4 GPUs at once (its capacity share) and holds 4") {
		t.Fatalf("a fifth shared GPU: %s (%s); the cap is 4", l.State, l.Reason)
	}
	if f.starts != 4 {
		t.Errorf("%d jobs submitted, want 4: the fifth waits for the cap", f.starts)
	}
	p, err := svc.Pool(context.Background(), "interactive")
	if err != nil {
		t.Fatal(err)
	}
	if p.Free() != 0 || p.Capacity != 16 {
		t.Errorf("pool %+v: want 0 free of 16", p)
	}
}

// The scheduler's inventory places an exclusive class's leases by team, and GPUs that others'
// jobs hold (the scheduler's count) are not given out.
func TestSchedulerInventoryPlacesByTeamAndCountsOthersJobs(t *testing.T) {
	svc, f, _, _ := schedService(t, qm.Started{State: qm.Active})
	f.nodes = exampleNodes()
	f.nodes[4].Used = 6 // h100-a: 6 GPUs held by jobs outside the service
	if _, err := svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := mustRequest(t, svc, "alice@acme.example", 4, "train")
	if a.Node != "h100-b" {
		t.Fatalf("4 train GPUs went to %q; only h100-b has 4 free", a.Node)
	}
	b := mustRequest(t, svc, "lee@acme.example", 2, "train")
	if b.Node != "h100-a" {
		t.Fatalf("another team's 2 train GPUs went to %q, want h100-a (h100-b runs vision)", b.Node)
	}
	c := mustRequest(t, svc, "maya@acme.example", 1, "train")
	if c.State != qm.Queued {
		t.Errorf("h100-a is full and h100-b runs another team: got %s on %q", c.State, c.Node)
	}
}

// A workspace whose job fails is reported to its owner as failed, with the scheduler's reason,
// the exit code and the last lines of its output, and it is dated when the job ended.
func TestFailedWorkspaceIsToldWithReasonAndOutput(t *testing.T) {
	svc, f, clock, notes := schedService(t, qm.Started{State: qm.Queued})
	l := mustRequest(t, svc, "alice@acme.example", 1, "interactive")
	ended := clock.Now().Add(2 * time.Second)
	f.mu.Lock()
	f.jobs[0].State, f.jobs[0].Reason, f.jobs[0].ExitCode, f.jobs[0].EndedAt = qm.JobFailed, "NonZeroExitCode", "127", ended
	f.jobs[0].Output = "/usr/sbin/sshd: No such file or directory\n"
	f.mu.Unlock()
	clock.Advance(time.Minute)
	if _, err := svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, svc, l.ID)
	if got.State != qm.Failed || !got.EndedAt.Equal(ended) {
		t.Fatalf("%s is %s ended %v; want failed at %v", l.ID, got.State, got.EndedAt, ended)
	}
	fs := notes.Of(qm.NoticeFailed, l.ID)
	if len(fs) != 1 || !strings.Contains(fs[0].Reason, "127") || !strings.Contains(fs[0].Detail, "sshd: No such file") {
		t.Fatalf("failure notices %+v: want one with the exit code and the output", fs)
	}
}

// A request that comes before the service has first read the scheduler's inventory (in the
// seconds after a start) is placed as one that comes after: a lease larger than a node takes
// whole nodes (and is counted and billed so), instead of going to the scheduler as one node it
// cannot fit.
func TestARequestBeforeTheFirstInventoryIsPlacedOnIt(t *testing.T) {
	svc, f, _, _ := schedService(t, qm.Started{State: qm.Active})
	f.nodes = exampleNodes() // the scheduler has them; the service has not asked yet
	l := mustRequest(t, svc, "alice@acme.example", 12, "train")
	if l.GPUs != 16 {
		t.Fatalf("12 GPUs of train (nodes of 8) before the first inventory: %s holding %d GPUs (%s); want 2 whole nodes, 16 GPUs", l.State, l.GPUs, l.Reason)
	}
	if f.refreshes != 1 {
		t.Errorf("the inventory was read %d times, want once", f.refreshes)
	}
}

// The catalog and an estimate asked for before the service has first read the scheduler's
// inventory (the first command after a start) count every class's GPUs, as later ones do: no
// class reads "the scheduler's to say" while the next one shows its GPUs, and a request larger
// than a node is quoted as the whole nodes /gpu request would hold and bill.
func TestCatalogAndEstimateBeforeTheFirstInventory(t *testing.T) {
	svc, f, _, _ := schedService(t, qm.Started{State: qm.Active})
	f.nodes = exampleNodes()
	want := map[string]int{}
	for _, n := range f.nodes {
		want[n.Class] += n.GPUs
	}
	cat, err := svc.Catalog(context.Background(), "alice@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range cat {
		if cs.Capacity != want[cs.Class.Name] {
			t.Errorf("the first catalog shows %s with %d GPUs; the scheduler has %d", cs.Class.Name, cs.Capacity, want[cs.Class.Name])
		}
	}

	svc, f, _, _ = schedService(t, qm.Started{State: qm.Active})
	f.nodes = exampleNodes()
	e, err := svc.EstimateRequest(context.Background(), "alice@acme.example", "train", 12, 2*time.Hour, false)
	if err != nil {
		t.Fatal(err)
	}
	if e.GPUs != 16 {
		t.Errorf("the first estimate of 12 train GPUs (nodes of 8) quotes %d GPUs; want the 2 whole nodes (16) a request holds", e.GPUs)
	}
}

// While the scheduler does not answer after a start, a command asks it for its nodes once, not
// once for the command and again for every class it counts (each ask of a scheduler that does not
// answer can take seconds: /gpu catalog took as many of them as twice the classes); later commands
// do not ask again for a while, and once the scheduler answers its nodes are counted.
func TestCommandsAskAnUnansweringSchedulerOnce(t *testing.T) {
	svc, f, clock, _ := schedService(t, qm.Started{State: qm.Active})
	f.nodes = exampleNodes()
	f.refreshErr = errors.New("slurm_load_node error: Unable to contact slurm controller (connect failure)")
	ctx := context.Background()
	if _, err := svc.Catalog(ctx, "alice@acme.example"); err != nil {
		t.Fatal(err)
	}
	if f.refreshes != 1 {
		t.Fatalf("/gpu catalog asked a scheduler that does not answer for its nodes %d times, want once", f.refreshes)
	}
	if _, err := svc.EstimateRequest(ctx, "alice@acme.example", "train", 2, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	if f.refreshes != 1 {
		t.Fatalf("an estimate right after asked again (%d asks in all), want none", f.refreshes)
	}
	clock.Advance(time.Minute)
	f.refreshErr = nil
	cs, err := svc.Catalog(ctx, "alice@acme.example")
	if err != nil {
		t.Fatal(err)
	}
	if f.refreshes != 2 {
		t.Fatalf("a minute later the catalog asked %d times in all, want 2", f.refreshes)
	}
	for _, c := range cs {
		if c.Capacity == 0 {
			t.Errorf("once the scheduler answered, class %s counts no GPUs", c.Class.Name)
		}
	}
}
