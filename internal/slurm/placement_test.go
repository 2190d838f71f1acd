package slurm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// jobField reads one Key=Value of scontrol show job -o.
func (e *env) jobField(ref, key string) string {
	e.t.Helper()
	for _, f := range strings.Fields(e.slurmCmd("scontrol", "show", "job", "-o", ref)) {
		if k, v, ok := strings.Cut(f, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// TestPlacedLeaseRunsOnItsNode: a lease the service placed is submitted for its node alone
// (--nodelist) and runs there; a lease of a shared class does not ask for whole nodes.
func TestPlacedLeaseRunsOnItsNode(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	node := e.nodeName()
	l := &qm.Lease{ID: 7001, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, Duration: time.Hour,
		Node: node, GPUIndex: []int{2}}
	st, err := e.backend.Start(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	j := e.waitJob(st.Ref, "RUNNING")
	if req := e.jobField(st.Ref, "ReqNodeList"); req != node || j.Nodes != node {
		t.Errorf("job %s asks for nodes %q and runs on %q; want %s alone", st.Ref, req, j.Nodes, node)
	}
	if o := e.jobField(st.Ref, "OverSubscribe"); o != "OK" {
		t.Errorf("a shared class's job is exclusive (OverSubscribe=%s)", o)
	}
}

// TestExclusiveClassTeamsNeverShare: the test cluster has one node, so two teams' leases of the
// exclusive class train can only share it, and must not, whoever places them.
//
// Slurm places (leases handed over before the service knows the inventory): each asks for whole
// nodes (--exclusive), so while vision's job runs, language's waits in Slurm's queue, and runs
// when vision's ends.
//
// The service places (the inventory known): language's lease waits in the service's queue, no job
// submitted, while vision's runs on the node; when vision's ends it is placed on the node, pinned
// there with --nodelist, and runs.
func TestExclusiveClassTeamsNeverShare(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	t.Run("Slurm places", func(t *testing.T) {
		vision := &qm.Lease{ID: 7101, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 2, Duration: time.Hour}
		language := &qm.Lease{ID: 7102, User: "maya@acme.example", Team: "language", Class: "train", GPUs: 2, Duration: time.Hour}
		v, err := e.backend.Start(ctx, vision)
		if err != nil {
			t.Fatal(err)
		}
		e.waitJob(v.Ref, "RUNNING")
		if o := e.jobField(v.Ref, "OverSubscribe"); o != "NO" {
			t.Fatalf("vision's job %s shares its node (OverSubscribe=%s)", v.Ref, o)
		}
		l, err := e.backend.Start(ctx, language)
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			if j := e.job(l.Ref); j.State != "PENDING" {
				t.Fatalf("language's job %s is %s while vision's job %s runs on the one node", l.Ref, j.State, v.Ref)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err := e.backend.Stop(ctx, &qm.Lease{ID: vision.ID, Ref: v.Ref}); err != nil {
			t.Fatal(err)
		}
		e.waitJob(l.Ref, "RUNNING")
		if j := e.job(v.Ref); j.State == "RUNNING" {
			t.Errorf("vision's job %s still runs beside language's %s", v.Ref, l.Ref)
		}
		if err := e.backend.Stop(ctx, &qm.Lease{ID: language.ID, Ref: l.Ref}); err != nil {
			t.Fatal(err)
		}
		e.waitJob(l.Ref, "CANCELLED")
	})
	t.Run("the service places", func(t *testing.T) {
		if _, err := e.svc.Reconcile(ctx); err != nil { // reads the inventory
			t.Fatal(err)
		}
		vision := e.request("alice@acme.example", 2, "train", time.Hour, "", nil).Lease
		vision = e.waitLease(vision.ID, qm.Active)
		if req := e.jobField(vision.Ref, "ReqNodeList"); req != e.nodeName() {
			t.Errorf("vision's placed job %s asks for nodes %q, want %s", vision.Ref, req, e.nodeName())
		}
		language := e.request("maya@acme.example", 2, "train", time.Hour, "", nil).Lease
		for range 5 {
			if _, err := e.svc.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			if err := e.svc.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			l, err := e.svc.Get(ctx, language.ID)
			if err != nil {
				t.Fatal(err)
			}
			if l.State != qm.Queued || e.jobsOf(language.ID) != 0 {
				t.Fatalf("language's lease %s is %s with %d jobs while vision's runs on the one node; want queued, nothing submitted", l.ID, l.State, e.jobsOf(language.ID))
			}
			time.Sleep(100 * time.Millisecond)
		}
		if _, err := e.svc.Release(ctx, "alice@acme.example", vision.ID); err != nil {
			t.Fatal(err)
		}
		language = e.waitLease(language.ID, qm.Active)
		if req := e.jobField(language.Ref, "ReqNodeList"); req != e.nodeName() {
			t.Errorf("language's placed job %s asks for nodes %q, want %s", language.Ref, req, e.nodeName())
		}
		if j := e.job(vision.Ref); j.State == "RUNNING" {
			t.Errorf("vision's job %s still runs beside language's %s", vision.Ref, language.Ref)
		}
	})
}
