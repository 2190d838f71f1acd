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
// exclusive class train can only share it, and must not. Handed to Slurm unplaced (the service
// does not know the inventory yet), each asks for whole nodes (--exclusive): while vision's lease
// runs, language's waits in Slurm's queue, and runs when vision's ends. They are never RUNNING
// together.
func TestExclusiveClassTeamsNeverShare(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	vision := e.request("alice@acme.example", 2, "train", time.Hour, "", nil).Lease
	vision = e.waitLease(vision.ID, qm.Active)
	if o := e.jobField(vision.Ref, "OverSubscribe"); o != "NO" {
		t.Fatalf("vision's job %s shares its node (OverSubscribe=%s)", vision.Ref, o)
	}
	language := e.request("maya@acme.example", 2, "train", time.Hour, "", nil).Lease
	if language.State != qm.Queued || language.Ref == "" {
		t.Fatalf("language's lease %s is %s with job %q while vision's runs; want queued with its job pending", language.ID, language.State, language.Ref)
	}
	for range 5 { // a few passes: it stays pending while vision's runs
		if _, err := e.svc.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if j := e.job(language.Ref); j.State != "PENDING" {
			t.Fatalf("language's job %s is %s while vision's job %s runs on the one node", language.Ref, j.State, vision.Ref)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := e.svc.Release(ctx, "alice@acme.example", vision.ID); err != nil {
		t.Fatal(err)
	}
	language = e.waitLease(language.ID, qm.Active)
	if j := e.job(vision.Ref); j.State == "RUNNING" {
		t.Errorf("vision's job %s still runs beside language's %s", vision.Ref, language.Ref)
	}
}
