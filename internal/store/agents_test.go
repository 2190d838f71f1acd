package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// A node has one valid token at a time: a second one is refused until the first is revoked; a
// revoked token no longer names its node; the list shows both states.
func TestAgentTokensCreateRevokeList(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
		if err := db.CreateAgentToken(ctx, "gpu-01", "h1", at); err != nil {
			t.Fatal(err)
		}
		if err := db.CreateAgentToken(ctx, "gpu-01", "h2", at); qm.ErrorCode(err) != qm.ECONFLICT {
			t.Fatalf("a second token for gpu-01: %v, want ECONFLICT", err)
		}
		if node, err := db.AgentNode(ctx, "h1"); err != nil || node != "gpu-01" {
			t.Fatalf("AgentNode(h1) = %q, %v", node, err)
		}
		if err := db.RevokeAgentToken(ctx, "gpu-01", at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := db.RevokeAgentToken(ctx, "gpu-01", at.Add(time.Hour)); qm.ErrorCode(err) != qm.ENOTFOUND {
			t.Fatalf("revoking twice: %v, want ENOTFOUND", err)
		}
		if _, err := db.AgentNode(ctx, "h1"); !errors.Is(err, store.ErrAgentUnauthorized) {
			t.Fatalf("a revoked token: %v, want ErrAgentUnauthorized", err)
		}
		if err := db.CreateAgentToken(ctx, "gpu-02", "h3", at); err != nil {
			t.Fatal(err)
		}
		list, err := db.AgentTokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 || list[0].Node != "gpu-01" || list[0].RevokedAt.IsZero() || list[1].Node != "gpu-02" || !list[1].RevokedAt.IsZero() {
			t.Fatalf("tokens = %+v", list)
		}
		if err := db.CreateAgentToken(ctx, "gpu-01", "h4", at.Add(2*time.Hour)); err != nil {
			t.Fatalf("a new token after revoking: %v", err)
		}
		if node, err := db.AgentNode(ctx, "h4"); err != nil || node != "gpu-01" {
			t.Fatalf("AgentNode(h4) = %q, %v", node, err)
		}
	})
}

// A report moves the node's clock forward and stores its sample, activity and topology; the same
// report again is a replay that stores nothing; a report under a revoked token stores nothing.
func TestRecordAgentReport(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
		if err := db.CreateAgentToken(ctx, "gpu-01", "h1", t0); err != nil {
			t.Fatal(err)
		}
		topo := &qm.Topology{Node: "gpu-01", At: t0, GPUs: []qm.TopologyGPU{
			{Index: 0, UUID: "GPU-a", NUMA: 0, NVLinks: []int{0, 4}, PCIe: []qm.PCIeLevel{qm.LevelSelf, qm.LevelNUMA}},
			{Index: 1, UUID: "GPU-b", NUMA: 1, NVLinks: []int{4, 0}, PCIe: []qm.PCIeLevel{qm.LevelNUMA, qm.LevelSelf}},
		}}
		topo.SetIslands()
		rep := func(at time.Time, acts ...store.LeaseActivity) store.AgentReport {
			return store.AgentReport{Node: "gpu-01", TokenHash: "h1", At: at, Seq: 1, Received: at, GPUs: []byte(`[]`), Activity: acts}
		}
		first := rep(t0, store.LeaseActivity{Lease: 7, Utilization: 0, MemUsed: 1 << 30})
		first.Topology, first.TopologyHash = topo, "abc"
		res, err := db.RecordAgentReport(ctx, first)
		if err != nil || res.Replayed || res.TopologyHash != "abc" {
			t.Fatalf("first report: %+v, %v", res, err)
		}
		a, ok, err := db.Activity(ctx, 7)
		if err != nil || !ok || !a.Seen.Equal(t0) || !a.LastActive.IsZero() {
			t.Fatalf("after an idle first report: %+v %v %v; want seen at %s, never active", a, ok, err, t0)
		}
		if res, err := db.RecordAgentReport(ctx, first); err != nil || !res.Replayed {
			t.Fatalf("the same report again: %+v, %v; want a replay", res, err)
		}
		// Same memory, idle: last active stays unset; memory changed: active now; busy: active.
		t1, t2, t3 := t0.Add(10*time.Second), t0.Add(20*time.Second), t0.Add(30*time.Second)
		for _, r := range []store.AgentReport{
			rep(t1, store.LeaseActivity{Lease: 7, MemUsed: 1 << 30}),
			rep(t2, store.LeaseActivity{Lease: 7, MemUsed: 2 << 30}),
		} {
			if _, err := db.RecordAgentReport(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if a, _, _ := db.Activity(ctx, 7); !a.Seen.Equal(t2) || !a.LastActive.Equal(t2) {
			t.Fatalf("after memory grew: %+v; want active at %s", a, t2)
		}
		if _, err := db.RecordAgentReport(ctx, rep(t3, store.LeaseActivity{Lease: 7, MemUsed: 2 << 30, Utilization: 70, Active: true})); err != nil {
			t.Fatal(err)
		}
		if a, _, _ := db.Activity(ctx, 7); !a.LastActive.Equal(t3) || a.Utilization != 70 {
			t.Fatalf("after a busy report: %+v", a)
		}
		if _, _, ok, _ := db.NodeTopologyOf(ctx, "gpu-02"); ok {
			t.Fatal("gpu-02 has a topology it never reported")
		}
		all, err := db.NodeTopology(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := all["gpu-01"]
		if len(got.GPUs) != 2 || got.GPUs[1].UUID != "GPU-b" || got.GPUs[1].NUMA != 1 || got.GPUs[0].Island != got.GPUs[1].Island || got.GPUs[0].PCIe[1] != qm.LevelNUMA {
			t.Fatalf("stored topology = %+v", got)
		}
		if n, _ := db.AgentSamples(ctx, "gpu-01"); n != 4 {
			t.Fatalf("%d raw samples, want 4 (the replay stored none)", n)
		}
		if err := db.RevokeAgentToken(ctx, "gpu-01", t3); err != nil {
			t.Fatal(err)
		}
		if _, err := db.RecordAgentReport(ctx, rep(t3.Add(time.Minute))); !errors.Is(err, store.ErrAgentUnauthorized) {
			t.Fatalf("a report under a revoked token: %v", err)
		}
		if n, _ := db.AgentSamples(ctx, "gpu-01"); n != 4 {
			t.Fatalf("%d raw samples after the refused report, want 4", n)
		}
		n, err := db.PruneAgentData(ctx, t2, t0)
		if err != nil || n != 2 {
			t.Fatalf("prune: %d, %v; want the two samples before %s", n, err, t2)
		}
	})
}

// Reports of several nodes share one transaction: each is judged on its own (accepted, replayed,
// unauthorized), a node reporting twice in one batch has both reports kept in time order, and a
// lease covered twice ends with the later report's activity.
func TestRecordAgentReportsBatch(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
		for _, n := range []string{"a", "b"} {
			if err := db.CreateAgentToken(ctx, n, "h"+n, t0); err != nil {
				t.Fatal(err)
			}
		}
		rep := func(node, hash string, at time.Time, util float64, active bool) store.AgentReport {
			return store.AgentReport{Node: node, TokenHash: hash, At: at, Received: at, GPUs: []byte(`[]`),
				Activity: []store.LeaseActivity{{Lease: 9, Utilization: util, Active: active}}}
		}
		t1, t2 := t0.Add(10*time.Second), t0.Add(20*time.Second)
		res, err := db.RecordAgentReports(ctx, []store.AgentReport{
			rep("b", "hb", t2, 90, true), // b twice, newest first: the older one still counts
			rep("a", "ha", t1, 10, false),
			rep("b", "hb", t1, 0, false),
			rep("b", "hb", t1, 0, false), // the same report again in the batch: a replay
			rep("a", "hb", t2, 0, false), // b's token for a
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []store.AgentReportResult{{}, {}, {}, {Replayed: true}, {Unauthorized: true}}
		for i := range want {
			if res[i] != want[i] {
				t.Errorf("report %d: %+v, want %+v", i, res[i], want[i])
			}
		}
		if n, _ := db.AgentSamples(ctx, "b"); n != 2 {
			t.Errorf("%d samples of b, want 2", n)
		}
		if a, _, _ := db.Activity(ctx, 9); !a.Seen.Equal(t2) || !a.LastActive.Equal(t2) || a.Utilization != 90 {
			t.Errorf("lease 9 = %+v; want b's report at %s", a, t2)
		}
	})
}

// Node names match ignoring A-Z case: GPU-01 and gpu-01 are one node with one valid token, which
// either spelling revokes, and the name stays as first written.
func TestAgentTokenNodeNamesIgnoreCase(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
		if err := db.CreateAgentToken(ctx, "gpu-01", "h1", at); err != nil {
			t.Fatal(err)
		}
		if err := db.CreateAgentToken(ctx, "GPU-01", "h2", at); qm.ErrorCode(err) != qm.ECONFLICT {
			t.Fatalf("a token for GPU-01 while gpu-01 has one: %v, want ECONFLICT", err)
		}
		if err := db.RevokeAgentToken(ctx, "GPU-01", at.Add(time.Hour)); err != nil {
			t.Fatalf("revoking GPU-01: %v", err)
		}
		if err := db.CreateAgentToken(ctx, "Gpu-01", "h3", at.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		list, err := db.AgentTokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].Node != "gpu-01" || !list[0].RevokedAt.IsZero() {
			t.Fatalf("tokens = %+v; want gpu-01's, valid", list)
		}
		if node, err := db.AgentNode(ctx, "h3"); err != nil || node != "gpu-01" {
			t.Fatalf("AgentNode(h3) = %q, %v", node, err)
		}
	})
}
