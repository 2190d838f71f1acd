package ingest_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// An agent started as a node the scheduler has never heard of, with no node of its short name
// either (a mistyped --node), has its reports taken, and the service logs one warning, not one per
// report, naming the node and the nearest nodes the scheduler knows. A node the scheduler knows is
// not warned of, nor one it knew and no longer lists (cordoned, drained).
func TestAnAgentReportingAsANodeTheSchedulerDoesNotKnowIsWarnedOnce(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	var logs syncBuf
	var mu sync.Mutex
	byNode := ingest.NodeInventories([]qm.Node{
		{Name: "reef-08", Class: "viz", GPUs: 2}, {Name: "reef-09", Class: "viz", GPUs: 2}, {Name: "kelp-2", Class: "batch", GPUs: 2},
	}, func(string) string { return "" }, func(c string) string { return c })
	e.ing = ingest.New(ingest.Config{Store: e.db, Clock: e.clock, IdleBelow: 5, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Leases: func(context.Context) ([]*qm.Lease, error) { return nil, nil },
		Inventory: func(node string) *ingest.NodeInventory {
			mu.Lock()
			defer mu.Unlock()
			return ingest.LookupInventory(byNode, node)
		}})
	e.serve(t, "reef-8", "kelp-2")
	warnings := func(node string) []string {
		var out []string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "level=WARN") && strings.Contains(l, "node="+node+" ") {
				out = append(out, l)
			}
		}
		return out
	}
	send := func(node string) {
		t.Helper()
		r := e.rep()
		r.Topology, r.TopologyHash = nil, ""
		r.Node = node
		e.accept(e.tokens[node], r)
	}
	for range 3 {
		send("reef-8")
		send("kelp-2")
		e.clock.Advance(10 * time.Second)
	}
	w := warnings("reef-8")
	if len(w) != 1 {
		t.Fatalf("after 3 reports of reef-8, %d warnings naming it; want 1:\n%s", len(w), logs.String())
	}
	if !strings.Contains(w[0], "did you mean reef-08?") || !strings.Contains(w[0], "--node reef-08") {
		t.Errorf("the warning of reef-8 does not point to reef-08 and --node:\n%s", w[0])
	}
	if w := warnings("kelp-2"); len(w) != 0 {
		t.Errorf("kelp-2, a node the scheduler knows, warned of: %q", w)
	}

	// kelp-2 leaves the inventory (cordoned): not a mistyped name, no warning.
	mu.Lock()
	delete(byNode, "kelp-2")
	mu.Unlock()
	for range 2 {
		send("kelp-2")
		e.clock.Advance(10 * time.Second)
	}
	if w := warnings("kelp-2"); len(w) != 0 {
		t.Errorf("kelp-2, known and then no longer listed, warned of as unknown: %q", w)
	}
}

// The nearest of the scheduler's nodes to a name it lacks: those of the same short name, else
// those fewest letters off, at most three, in order; none for a name it has (in any case).
func TestTheNearestNodesToANameTheSchedulerLacks(t *testing.T) {
	known := []string{"reef-08", "reef-09", "kelp-2", "gpu-07.cluster.example", "a40-1", "a40-2", "a40-3", "a40-4"}
	for _, c := range []struct {
		node string
		want string
	}{
		{"reef-8", "reef-08"},
		{"gpu-07", "gpu-07.cluster.example"},
		{"a40-9", "a40-1 a40-2 a40-3"},
		{"KELP-2", ""},
	} {
		if got := strings.Join(ingest.NearestNodes(c.node, known), " "); got != c.want {
			t.Errorf("NearestNodes(%q) = %q; want %q", c.node, got, c.want)
		}
	}
}
