package slurm_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
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

// jobGRES reads the GPUs Slurm gave a job on its node from scontrol show job -d: "GRES=gpu:h100:4(IDX:2-5)".
func (e *env) jobGRES(ref string) string {
	e.t.Helper()
	for _, f := range strings.Fields(e.slurmCmd("scontrol", "show", "job", "-d", ref)) {
		if v, ok := strings.CutPrefix(f, "GRES="); ok {
			return v
		}
	}
	return ""
}

// TestTopologyPlacedLeasesOnSlurm: the node agent reports the node's eight h100s as two NVLink
// islands of four; the service places a 2-GPU and then a 4-GPU lease on the node (each in one
// island) and submits them pinned to the node with CPUs bound to their GPUs
// (--gres-flags=enforce-binding, which Slurm takes). Slurm has no option that names GPU indexes
// and picks the GPUs itself; each lease then records the GPUs Slurm gave its job (scontrol show
// job -d) and how well they are connected, so the showback's figure is what runs.
func TestTopologyPlacedLeasesOnSlurm(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	node := e.twoIslands()
	island := func(gpus []int) bool {
		for _, g := range gpus {
			if g/4 != gpus[0]/4 {
				return false
			}
		}
		return true
	}
	for _, n := range []int{2, 4} {
		l := e.request("alice@acme.example", n, "train", time.Hour, "", nil).Lease
		if l.Node != node {
			t.Fatalf("%d GPUs placed on %q; want %s", n, l.Node, node)
		}
		l = e.waitLease(l.ID, qm.Active)
		if b := e.jobField(l.Ref, "GresEnforceBind"); b != "Yes" {
			t.Errorf("job %s of %d GPUs: GresEnforceBind=%q, want Yes", l.Ref, n, b)
		}
		if req := e.jobField(l.Ref, "ReqNodeList"); req != node {
			t.Errorf("job %s asks for nodes %q, want %s", l.Ref, req, node)
		}
		gres := e.jobGRES(l.Ref)
		var got *qm.Lease
		e.eventually(l.ID.String()+" to record the GPUs of "+gres, func() bool {
			if _, err := e.svc.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			got = e.waitLease(l.ID, qm.Active)
			return strings.HasSuffix(gres, "(IDX:"+idxList(got.GPUIndex)+")")
		})
		want := qm.ConnectionSpread
		if island(got.GPUIndex) {
			want = qm.ConnectionIsland
		}
		if got.Connection != want {
			t.Errorf("%s holds GPUs %v (Slurm: %s): connection %q, want %q", got.ID, got.GPUIndex, gres, got.Connection, want)
		}
		// Slurm 22.05 gives a job with enforce-binding that names its task count every core bound
		// to its GPUs: the script leaves the task count to Slurm's default, so the job holds what it asks.
		if cpus, asked := e.jobField(l.Ref, "NumCPUs"), e.jobField(l.Ref, "MinCPUsNode"); cpus != asked {
			t.Errorf("job %s of %d GPUs holds %s CPUs, asked for %s", l.Ref, n, cpus, asked)
		}
		t.Logf("%d GPUs: Slurm gave %s: recorded %v, %s", n, gres, got.GPUIndex, got.Connection)
	}
}

// twoIslands has the node agent report the test node's eight h100s as two NVLink islands of four,
// and reads the inventory with that topology; it returns the node's name.
func (e *env) twoIslands() string {
	t := e.t
	ctx := context.Background()
	db := e.svc.Store.(*store.DB)
	e.svc.Topology = db
	node := e.nodeName()
	topo := qm.Topology{Node: node, At: e.clock.Now(), GPUs: make([]qm.TopologyGPU, 8)}
	for i := range topo.GPUs {
		topo.GPUs[i] = qm.TopologyGPU{Index: i, NUMA: i / 4, NVLinks: make([]int, 8)}
		for j := range 8 {
			if i != j && i/4 == j/4 {
				topo.GPUs[i].NVLinks[j] = 12
			}
		}
	}
	topo.SetIslands()
	if err := db.CreateAgentToken(ctx, node, "hash-"+node, topo.At); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RecordAgentReport(ctx, store.AgentReport{Node: node, TokenHash: "hash-" + node, At: topo.At, Received: topo.At, Seq: 1,
		GPUs: []byte("[]"), Topology: &topo, TopologyHash: "t1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Reconcile(ctx); err != nil { // the inventory, and the agent's topology
		t.Fatal(err)
	}
	return node
}

// TestStartShowsSlurmsGPUs: a lease whose job runs by the time the request is answered shows the
// GPUs Slurm gave it at once, in the reply itself, not the GPUs the service chose (Slurm picks its
// own: with GPUs 0-1 held, the service chooses the other island, 4-7, and Slurm gives 2-5) until a
// later reconcile pass; a lease whose job does not run yet shows none.
func TestStartShowsSlurmsGPUs(t *testing.T) {
	e := newEnv(t)
	e.twoIslands()
	for _, n := range []int{2, 4} {
		l := e.request("alice@acme.example", n, "train", time.Hour, "", nil).Lease
		if l.State != qm.Active {
			if len(l.GPUIndex) != 0 {
				t.Errorf("%s is %s, its job not running yet, and shows GPUs %v", l.ID, l.State, l.GPUIndex)
			}
			l = e.waitLease(l.ID, qm.Active)
			t.Logf("%s was not running at its reply; Slurm gave %s", l.ID, e.jobGRES(l.Ref))
			continue
		}
		gres := e.jobGRES(l.Ref)
		if !strings.HasSuffix(gres, "(IDX:"+idxList(l.GPUIndex)+")") {
			t.Errorf("%s of %d GPUs replies with GPUs %v; Slurm gave its job %s", l.ID, n, l.GPUIndex, gres)
		}
		if got, _ := e.svc.Get(context.Background(), l.ID); !slices.Equal(got.GPUIndex, l.GPUIndex) {
			t.Errorf("%s records GPUs %v and replied %v", l.ID, got.GPUIndex, l.GPUIndex)
		}
	}
}

// idxList writes GPU indexes as Slurm's IDX does: 0-1, 2-5, 0,2-3.
func idxList(g []int) string {
	var parts []string
	for i := 0; i < len(g); {
		j := i
		for j+1 < len(g) && g[j+1] == g[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", g[i], g[j]))
		} else {
			parts = append(parts, fmt.Sprint(g[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
