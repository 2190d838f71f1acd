package qm_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
)

// reportTopology stores a node's topology as its node agent reports it: GPUs linked by NVLink
// in the given groups, the first half of the GPUs on NUMA node 0 and the rest on node 1.
func reportTopology(t *testing.T, db *store.DB, at time.Time, node string, gpus int, groups ...[]int) {
	t.Helper()
	ctx := context.Background()
	topo := qm.Topology{Node: node, At: at, GPUs: make([]qm.TopologyGPU, gpus)}
	for i := range topo.GPUs {
		topo.GPUs[i] = qm.TopologyGPU{Index: i, NUMA: i * 2 / gpus, NVLinks: make([]int, gpus)}
	}
	for _, grp := range groups {
		for _, a := range grp {
			for _, b := range grp {
				if a != b {
					topo.GPUs[a].NVLinks[b] = 12
				}
			}
		}
	}
	topo.SetIslands()
	hash := "token-" + node
	if err := db.CreateAgentToken(ctx, node, hash, topo.At); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RecordAgentReport(ctx, store.AgentReport{Node: node, TokenHash: hash, At: topo.At, Received: topo.At, Seq: 1, GPUs: []byte("[]"),
		Topology: &topo, TopologyHash: node + "-topology"}); err != nil {
		t.Fatal(err)
	}
}

// The scheduler's nodes carry no topology; their node agents report it, and the reconcile pass
// fills it in: a 4-GPU lease lands in one NVLink island, on the fuller node, and is recorded as
// connected. When the scheduler (Slurm picks a job's GPUs itself) says the job holds other GPUs,
// the lease adopts them and is recorded as spread. A node whose agent reports more GPUs than the
// node has for the class (a node split between GPU types) keeps its islands unknown.
func TestAgentTopologyPlacesAndTheSchedulersGPUsAreAdopted(t *testing.T) {
	svc, f, clock, _ := schedService(t, qm.Started{State: qm.Active})
	db := svc.Store.(*store.DB)
	svc.Topology = db
	f.nodes = []qm.Node{
		{Name: "gpu01", Class: "train", GPUs: 8, Used: 2}, // two GPUs held outside the service
		{Name: "gpu02", Class: "train", GPUs: 8},
		{Name: "gpu03", Class: "train", GPUs: 8},
	}
	reportTopology(t, db, clock.Now(), "gpu01", 8, []int{0, 1, 2, 3}, []int{4, 5, 6, 7})
	reportTopology(t, db, clock.Now(), "gpu02", 8, []int{0, 1, 2, 3}, []int{4, 5, 6, 7})
	reportTopology(t, db, clock.Now(), "gpu03", 12, []int{0, 1, 2, 3}, []int{4, 5, 6, 7}, []int{8, 9, 10, 11})
	ctx := context.Background()
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	l := mustRequest(t, svc, "alice@acme.example", 4, "train")
	if l.State != qm.Active || l.Node != "gpu01" || !slices.Equal(l.GPUIndex, []int{0, 1, 2, 3}) || l.Connection != qm.ConnectionIsland {
		t.Fatalf("4 GPUs: %s on %s GPUs %v %q; want gpu01 0-3 (one island, the fuller node), connected", l.State, l.Node, l.GPUIndex, l.Connection)
	}
	if got := mustGet(t, svc, l.ID); got.Connection != qm.ConnectionIsland {
		t.Fatalf("stored connection %q, want island", got.Connection)
	}

	f.mu.Lock()
	f.jobs[0].GPUIndex = []int{0, 1, 2, 4}
	f.mu.Unlock()
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, svc, l.ID)
	if !slices.Equal(got.GPUIndex, []int{0, 1, 2, 4}) || got.Connection != qm.ConnectionSpread || got.State != qm.Active {
		t.Fatalf("after the scheduler gave GPUs 0,1,2,4: %s GPUs %v %q; want them adopted, spread", got.State, got.GPUIndex, got.Connection)
	}

	// gpu01 and gpu02 busy: the lease goes to gpu03, whose agent reports 12 GPUs for 8 of the class.
	f.mu.Lock()
	f.nodes[0].Used, f.nodes[1].Used = 4, 8
	f.mu.Unlock()
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	l = mustRequest(t, svc, "alice@acme.example", 2, "train")
	if l.Node != "gpu03" || l.Connection != qm.ConnectionUnknown {
		t.Fatalf("2 GPUs with gpu01 and gpu02 full: %s GPUs %v %q; want gpu03, connection unknown", l.Node, l.GPUIndex, l.Connection)
	}
}

// A node's agent may name it in other letter case than the scheduler (host name DGX-07, Slurm
// node dgx-07): node names match ignoring A-Z case, so its topology still places a 4-GPU lease in
// one NVLink island.
func TestAgentTopologyOfANodeNamedInOtherCase(t *testing.T) {
	svc, f, clock, _ := schedService(t, qm.Started{State: qm.Active})
	db := svc.Store.(*store.DB)
	svc.Topology = db
	f.nodes = []qm.Node{{Name: "dgx-07", Class: "train", GPUs: 8, Used: 1}}
	reportTopology(t, db, clock.Now(), "DGX-07", 8, []int{0, 2, 4, 6}, []int{1, 3, 5, 7})
	if _, err := svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	l := mustRequest(t, svc, "alice@acme.example", 4, "train")
	if l.Node != "dgx-07" || l.Connection != qm.ConnectionIsland {
		t.Fatalf("4 GPUs: on %s GPUs %v %q; want dgx-07, one island", l.Node, l.GPUIndex, l.Connection)
	}
}
