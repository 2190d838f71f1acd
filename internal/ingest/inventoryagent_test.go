//go:build cgo

package ingest_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/nvml"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// fakeAgent is an agent reporting as node on a fake DGX A100 (8 × Mock NVIDIA A100-SXM4-40GB),
// on e's clock.
func fakeAgent(t *testing.T, e *env, node string) (*agent.Agent, *nvml.Fake) {
	t.Helper()
	return fakeAgentWith(t, e, node, "* 0")
}

// fakeAgentWith is fakeAgent with its GPUs doing what script says (--fake-util).
func fakeAgentWith(t *testing.T, e *env, node, script string) (*agent.Agent, *nvml.Fake) {
	t.Helper()
	sc, err := agent.ParseScript(script)
	if err != nil {
		t.Fatal(err)
	}
	f, err := nvml.NewFake("dgxa100", node, agent.StaticScript(sc))
	if err != nil {
		t.Fatal(err)
	}
	d, err := nvml.OpenFake(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	a, err := agent.New(agent.Config{Node: node, Devices: d, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return a, f
}

// An agent started as node l40s-01 on a DGX A100, where the scheduler's inventory holds 4 × L40S
// of class interactive, has its reports taken, and the service logs once, not at every report,
// that the node's agent reports other GPUs than the inventory holds: naming the node, what each
// side says and what to check. `agent-token list` reads it from the store. A node whose agent
// matches is not warned of, nor is one whose GPU is lost while it runs (told of lease by lease).
// Once mended, the service says so once; when it comes back, or what differs changes, it warns
// again once.
func TestAnAgentOnOtherGPUsThanItsNodesInventoryIsWarnedOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newEnv(t, url)
		var logs syncBuf
		var mu sync.Mutex
		inv := map[string]*ingest.NodeInventory{
			"l40s-01": {GPUs: 4, Classes: []ingest.InventoryClass{{Name: "interactive", SKU: "L40S", GPUs: 4}}},
			"dgx-01":  {GPUs: 8, Classes: []ingest.InventoryClass{{Name: "train", SKU: "A100", GPUs: 8}}},
		}
		setInv := func(node string, n *ingest.NodeInventory) {
			mu.Lock()
			inv[node] = n
			mu.Unlock()
		}
		e.ing = ingest.New(ingest.Config{Store: e.db, Clock: e.clock, IdleBelow: 5, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			Leases: func(context.Context) ([]*qm.Lease, error) { return nil, nil },
			Inventory: func(node string) *ingest.NodeInventory {
				mu.Lock()
				defer mu.Unlock()
				if n, ok := inv[strings.ToLower(node)]; ok {
					return n
				}
				return &ingest.NodeInventory{}
			}})
		e.serve(t, "l40s-01", "dgx-01")
		wrong, _ := fakeAgent(t, e, "l40s-01")
		right, rightFake := fakeAgent(t, e, "dgx-01")
		send := func(a *agent.Agent, node string) {
			t.Helper()
			r, err := a.Collect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			e.accept(e.tokens[node], r)
		}
		warnings := func(node string) []string {
			var out []string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "level=WARN") && strings.Contains(l, "node="+node+" ") && strings.Contains(l, "inventory") {
					out = append(out, l)
				}
			}
			return out
		}
		tokenOf := func(node string) store.AgentToken {
			t.Helper()
			ts, err := e.db.AgentTokens(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, tk := range ts {
				if tk.Node == node {
					return tk
				}
			}
			t.Fatalf("no token of %s", node)
			return store.AgentToken{}
		}

		for range 3 {
			send(wrong, "l40s-01")
			send(right, "dgx-01")
			e.clock.Advance(10 * time.Second)
		}
		w := warnings("l40s-01")
		if len(w) != 1 {
			t.Fatalf("after 3 reports of l40s-01, %d warnings; want 1:\n%s", len(w), logs.String())
		}
		for _, want := range []string{"8 GPUs (Mock NVIDIA A100-SXM4-40GB)", "4 GPUs (class interactive: 4 × L40S)", "--node (QM_NODE)", "sku of class interactive"} {
			if !strings.Contains(w[0], want) {
				t.Errorf("the warning lacks %q:\n%s", want, w[0])
			}
		}
		if tk := tokenOf("l40s-01"); !tk.InventoryChecked || !strings.Contains(tk.InventoryMismatch, "8 GPUs (Mock NVIDIA A100-SXM4-40GB)") {
			t.Errorf("l40s-01's token: %+v; want its mismatch kept", tk)
		}
		if w := warnings("dgx-01"); len(w) != 0 {
			t.Errorf("dgx-01, whose agent matches, warned of: %q", w)
		}
		if tk := tokenOf("dgx-01"); !tk.InventoryChecked || tk.InventoryMismatch != "" {
			t.Errorf("dgx-01's token: %+v; want checked and matching", tk)
		}

		// A GPU lost while the agent runs: its topology still lists it (marked lost), and the
		// leases on the node are judged as the docs say; no inventory warning.
		dev := rightFake.Server.Devices[6].(*server.Device)
		dev.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, gonvml.ERROR_GPU_IS_LOST }
		send(right, "dgx-01")
		e.clock.Advance(agent.DefaultTopologyEvery)
		send(right, "dgx-01")
		if w := warnings("dgx-01"); len(w) != 0 {
			t.Errorf("dgx-01, with a GPU lost while its agent runs, warned of as not matching its inventory: %q", w)
		}

		// The inventory mended (the node is what its agent says): told once.
		setInv("l40s-01", &ingest.NodeInventory{GPUs: 8, Classes: []ingest.InventoryClass{{Name: "train", SKU: "A100", GPUs: 8}}})
		e.clock.Advance(10 * time.Second)
		send(wrong, "l40s-01")
		send(wrong, "l40s-01")
		if n := strings.Count(logs.String(), "again"); n != 1 {
			t.Errorf("after the inventory is mended, %d lines saying so; want 1:\n%s", n, logs.String())
		}
		if tk := tokenOf("l40s-01"); !tk.InventoryChecked || tk.InventoryMismatch != "" {
			t.Errorf("l40s-01's token once mended: %+v", tk)
		}
		// It comes back: warned again, once.
		setInv("l40s-01", &ingest.NodeInventory{GPUs: 4, Classes: []ingest.InventoryClass{{Name: "interactive", SKU: "L40S", GPUs: 4}}})
		send(wrong, "l40s-01")
		send(wrong, "l40s-01")
		if w := warnings("l40s-01"); len(w) != 2 {
			t.Errorf("after the mismatch comes back, %d warnings; want 2", len(w))
		}

		// The count alone differs: warned once, saying to check what the scheduler counts.
		setInv("dgx-01", &ingest.NodeInventory{GPUs: 4, Classes: []ingest.InventoryClass{{Name: "train", SKU: "A100", GPUs: 4}}})
		send(right, "dgx-01")
		send(right, "dgx-01")
		w = warnings("dgx-01")
		if len(w) != 1 || !strings.Contains(w[0], "8 GPUs (Mock NVIDIA A100-SXM4-40GB)") || !strings.Contains(w[0], "4 GPUs (class train: 4 × A100)") ||
			!strings.Contains(w[0], "scheduler counts the GPUs") || strings.Contains(w[0], "sku") {
			t.Errorf("dgx-01 with 4 GPUs in the inventory: %q", w)
		}
		// A node the inventory no longer lists (cordoned, drained) is no longer counted as off.
		setInv("dgx-01", &ingest.NodeInventory{})
		send(right, "dgx-01")
		if tk := tokenOf("dgx-01"); tk.InventoryChecked {
			t.Errorf("dgx-01, not in the inventory: %+v; want not checked", tk)
		}
	})
}

// A scheduler that offers the MIG devices of a node's GPUs (Slurm's GRES of MIG profiles) counts
// those, not the GPUs: a node of 8 A100s each split in two, which it lists with 16, matches.
func TestANodeWhoseSchedulerCountsMIGDevicesMatches(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	var logs syncBuf
	e.ing = ingest.New(ingest.Config{Store: e.db, Clock: e.clock, IdleBelow: 5, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Leases: func(context.Context) ([]*qm.Lease, error) { return nil, nil },
		Inventory: func(string) *ingest.NodeInventory {
			return &ingest.NodeInventory{GPUs: 16, Classes: []ingest.InventoryClass{{Name: "slices", SKU: "A100", GPUs: 16}}}
		}})
	e.serve(t, "mig-01")
	a, _ := fakeAgentWith(t, e, "mig-01", "* 0 mig=3g.20gb,3g.20gb")
	r, err := a.Collect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	e.accept(e.tokens["mig-01"], r)
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("a node of 16 MIG devices the scheduler counts as 16 warned of:\n%s", logs.String())
	}
	ts, err := e.db.AgentTokens(t.Context())
	if err != nil || len(ts) == 0 {
		t.Fatal(ts, err)
	}
	for _, tk := range ts {
		if tk.Node == "mig-01" && (!tk.InventoryChecked || tk.InventoryMismatch != "") {
			t.Errorf("mig-01: %+v; want checked and matching", tk)
		}
	}
}
