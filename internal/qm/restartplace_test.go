package qm_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/qm/qmtest"
)

// restarted is the service started again on svc's database, with a backend whose inventory
// nothing has read yet (as after a restart, before the reconcile loop's first pass).
func restarted(svc *qm.Service, nodes []qm.Node) (*qm.Service, *fakeScheduler) {
	f := &fakeScheduler{startAs: qm.Started{State: qm.Active}, nodes: nodes}
	return &qm.Service{Policy: svc.Policy, Store: svc.Store, Clock: svc.Clock, Backend: f,
		Directory: svc.Directory, Notifier: &qmtest.NoticeLog{}, Logger: svc.Logger}, f
}

// heldNodes is nodes with every GPU of class held by jobs outside the service.
func heldNodes(nodes []qm.Node, class string) []qm.Node {
	ns := append([]qm.Node(nil), nodes...)
	for i := range ns {
		if ns[i].Class == class {
			ns[i].Used = ns[i].GPUs
		}
	}
	return ns
}

// twoNodesEach is two nodes of four GPUs for every class of p.
func twoNodesEach(p *policy.Policy) []qm.Node {
	var ns []qm.Node
	for _, c := range p.Classes {
		for i := 1; i <= 2; i++ {
			ns = append(ns, qm.Node{Name: fmt.Sprintf("%s-%d", c.Name, i), Class: c.Name, GPUs: 4})
		}
	}
	return ns
}

// A lease that waits in the service's queue is never handed to the scheduler unplaced after a
// restart: the first tick reads the scheduler's nodes before it places anything, so a lease
// whose class is full waits on, and one that fits starts on the node the service chose for it.
// While the nodes cannot be read, it waits, saying so. On a shared and an exclusive class, of
// two policies.
func TestAQueuedLeaseIsPlacedAfterARestart(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ policy, user, class string }{
		{"../../docs/quartermaster.example.yaml", "alice@acme.example", "interactive"},
		{"../../docs/quartermaster.example.yaml", "alice@acme.example", "train"},
		{"../../commands/testdata/tokyo.yaml", "haru@sakura.example", "jupyter"},
		{"../../commands/testdata/tokyo.yaml", "sora@sakura.example", "a100-big"},
	} {
		t.Run(filepath.Base(c.policy)+"/"+c.class, func(t *testing.T) {
			svc, f, _, _ := schedService(t, qm.Started{State: qm.Active})
			p, err := policy.LoadFile(c.policy)
			if err != nil {
				t.Fatal(err)
			}
			svc.Policy, svc.Directory = p, p
			nodes := twoNodesEach(p)
			f.nodes = heldNodes(nodes, c.class)
			if _, err := svc.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			l := mustRequest(t, svc, c.user, 1, c.class)
			if l.State != qm.Queued || l.Ref != "" {
				t.Fatalf("every %s GPU is held, yet the lease is %s (ref %q)", c.class, l.State, l.Ref)
			}

			// Restarted while the class is still full: the lease waits on in the service's queue.
			svc2, f2 := restarted(svc, heldNodes(nodes, c.class))
			if err := svc2.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			if got := mustGet(t, svc2, l.ID); got.State != qm.Queued || got.Ref != "" || len(f2.started) != 0 {
				t.Fatalf("after a restart, with every %s GPU held, the queued lease is %s (ref %q, %d submitted: %+v)", c.class, got.State, got.Ref, len(f2.started), f2.started)
			}

			// Restarted while the scheduler does not answer: it waits, and says for what.
			svc3, f3 := restarted(svc, nodes)
			f3.refreshErr = errors.New("slurm_load_node error: Unable to contact slurm controller")
			if err := svc3.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			got := mustGet(t, svc3, l.ID)
			if got.State != qm.Queued || len(f3.started) != 0 {
				t.Fatalf("the scheduler's nodes unknown, yet the queued lease is %s (%d submitted: %+v)", got.State, len(f3.started), f3.started)
			}
			if !strings.Contains(got.Reason, "nodes") {
				t.Errorf("waiting for the scheduler's nodes, its status says %q", got.Reason)
			}

			// Restarted with GPUs free: it starts on a node the service chose.
			svc4, f4 := restarted(svc, nodes)
			if err := svc4.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			got = mustGet(t, svc4, l.ID)
			if len(f4.started) != 1 || !strings.HasPrefix(f4.started[0].Node, c.class+"-") {
				t.Fatalf("GPUs free after a restart: submitted %+v, want one lease placed on a node of %s", f4.started, c.class)
			}
			if got.State != qm.Active || got.Node != f4.started[0].Node {
				t.Errorf("placed on %s, the lease is %s on %q", f4.started[0].Node, got.State, got.Node)
			}
		})
	}
}

// An approval right after a restart places the approved lease on the scheduler's nodes, as any
// queued lease that starts is.
func TestAnApprovalAfterARestartIsPlaced(t *testing.T) {
	ctx := context.Background()
	svc, f, _, _ := schedService(t, qm.Started{State: qm.Active})
	f.nodes = exampleNodes()
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", GPUs: 1, Class: "interactive", Duration: 24 * time.Hour})
	if err != nil || out.Lease.State != qm.PendingApproval {
		t.Fatalf("a request longer than the class allows: %+v %v", out, err)
	}
	svc2, f2 := restarted(svc, heldNodes(exampleNodes(), "interactive"))
	d, err := svc2.Decide(ctx, "dana@acme.example", out.Lease.ID, true, "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Lease.State != qm.Queued || len(f2.started) != 0 {
		t.Fatalf("approved with every interactive GPU held: %s, submitted %+v", d.Lease.State, f2.started)
	}
}
