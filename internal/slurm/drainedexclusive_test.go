package slurm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/slurm"
)

// TestExclusiveClassWithEveryNodeDrainedWaitsToBePlaced: with every node of an exclusive class
// drained, a request of that class waits in the service's queue, saying that no node of the class
// takes jobs now, rather than being handed to Slurm unplaced, where it would ask for whole nodes
// (--exclusive) and, once a node is back, hold every GPU of it, those of other classes too, while
// billed for one. When the node is resumed, the lease is placed on it (--nodelist, not
// --exclusive) and runs holding the GPUs it asked for.
func TestExclusiveClassWithEveryNodeDrainedWaitsToBePlaced(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	node := e.nodeName()
	e.slurmCmd("scontrol", "update", "nodename="+node, "state=drain", "reason=qm-test")
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			e.slurmCmd("scontrol", "update", "nodename="+node, "state=resume")
		}
	})

	out := e.request("alice@acme.example", 1, "train", time.Hour, "", nil)
	l := e.pass(out.Lease.ID)
	if l.State != qm.Queued || l.Ref != "" || e.jobsOf(l.ID) != 0 {
		t.Fatalf("a request of exclusive class train with its only node drained is %s with job %q (%d jobs, %s); want queued in the service, nothing submitted",
			l.State, l.Ref, e.jobsOf(l.ID), e.jobField(l.Ref, "OverSubscribe"))
	}
	if !strings.Contains(l.Reason, "every node of class train is drained, down or reserved in Slurm ("+node+": DRAIN)") {
		t.Errorf("it waits because %q; want that every node of class train is drained, naming its node", l.Reason)
	}

	e.slurmCmd("scontrol", "update", "nodename="+node, "state=resume")
	resumed = true
	e.eventually(l.ID.String()+" to run once its node is back", func() bool {
		if err := e.backend.RefreshInventory(ctx); err != nil {
			t.Logf("refresh: %v", err)
		}
		if err := e.svc.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		l = e.pass(l.ID)
		return l.State == qm.Active
	})
	if req, o := e.jobField(l.Ref, "ReqNodeList"), e.jobField(l.Ref, "OverSubscribe"); req != node || o == "NO" {
		t.Errorf("job %s asks for nodes %q with OverSubscribe=%s; want placed on %s, not whole nodes", l.Ref, req, o, node)
	}
}

// AwayNodes names the nodes of an exclusive class that take no jobs, each with its state, only
// where none of the class's nodes does; a shared class's requests wait in Slurm's queue instead.
func TestAwayNodesOfAnExclusiveClass(t *testing.T) {
	p := examplePolicy(t) // interactive (shared, gpu:l40s) and train (exclusive, gpu:h100)
	node := func(name string, states ...string) slurm.SinfoNode {
		return slurm.SinfoNode{Name: name, States: states, Partitions: []string{"interactive", "train"}, GRES: "gpu:h100:8,gpu:l40s:4"}
	}
	for _, c := range []struct {
		nodes []slurm.SinfoNode
		want  string
	}{
		{[]slurm.SinfoNode{node("gpu01", "IDLE", "DRAIN"), node("gpu02", "DOWN", "NOT_RESPONDING")},
			"every node of class train is drained, down or reserved in Slurm (gpu01: DRAIN, gpu02: DOWN)"},
		{[]slurm.SinfoNode{node("gpu01", "IDLE", "DRAIN"), node("gpu02", "MIXED")}, ""},
		{nil, ""},
	} {
		away := slurm.AwayNodes(p, c.nodes)
		if away["train"] != c.want || away["interactive"] != "" {
			t.Errorf("%+v: %q", c.nodes, away)
		}
	}
}
