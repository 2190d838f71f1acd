package main

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
)

// podUIDer is a backend that can tell the UIDs of the pods behind a lease (Kubernetes).
type podUIDer interface {
	PodUIDs(ctx context.Context, ref string) ([]string, error)
}

// newIngest makes the node agents' ingest for serve and, unless the backend brings its own
// telemetry (the simulated cluster), makes what the agents report the telemetry of the idle path.
func newIngest(a *App, log *slog.Logger) *ingest.Ingest {
	cfg := ingest.Config{
		Store: a.Store,
		Leases: func(ctx context.Context) ([]*qm.Lease, error) {
			return a.Service.List(ctx, qm.LeaseFilter{States: []qm.State{qm.Provisioning, qm.Active, qm.IdleWarned}})
		},
		Clock:     a.Clock,
		IdleBelow: a.Policy.Idle.UtilizationBelow,
		Location:  a.Policy.Location,
		Logger:    log,
	}
	cfg.Inventory = agentInventory(a)
	if p, ok := qm.BackendAs[podUIDer](a.Service.Backend); ok {
		cfg.PodUIDs = p.PodUIDs
	}
	if a.Service.Telemetry == nil {
		a.Service.Telemetry = ingest.Telemetry{Store: a.Store, Logger: log}
	}
	return ingest.New(cfg)
}

// agentInventory is what the scheduler's inventory holds of each node, with the policy's SKU of
// each class, for the ingest to check each node's agent against: nil until the backend has read
// its inventory. It is gathered again only when the backend's inventory changes (a new slice on
// each refresh).
func agentInventory(a *App) func(node string) *ingest.NodeInventory {
	sku := func(class string) string {
		if c, ok := a.Policy.Class(class); ok {
			return c.SKU
		}
		return ""
	}
	// Two classes on a node offer the same GPUs where the scheduler counts them alike: the same
	// GRES on Slurm, the same resource on Kubernetes; the simulated cluster's are the class's own.
	shares := func(class string) string {
		c, ok := a.Policy.Class(class)
		switch {
		case !ok:
			return class
		case a.BackendName == "slurm":
			return strings.ToLower(c.Slurm.GRES)
		case a.BackendName == "kubernetes":
			if c.Kubernetes.Resource == "" {
				return string(templates.DefaultGPUResource)
			}
			return c.Kubernetes.Resource
		}
		return class
	}
	var mu sync.Mutex
	var first *qm.Node
	var n int
	var byNode map[string]*ingest.NodeInventory
	return func(node string) *ingest.NodeInventory {
		inv := a.Service.Backend.Inventory()
		if len(inv) == 0 {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if first != &inv[0] || n != len(inv) {
			byNode, first, n = ingest.NodeInventories(inv, sku, shares), &inv[0], len(inv)
		}
		return ingest.LookupInventory(byNode, node)
	}
}

// agentInventoryMismatch reads, for each node with a valid agent token, whether its agent last
// reported other GPUs than the scheduler's inventory holds for it, for /metrics.
func agentInventoryMismatch(a *App) func(ctx context.Context) (map[string]bool, error) {
	return func(ctx context.Context) (map[string]bool, error) {
		ts, err := a.Store.AgentTokens(ctx)
		if err != nil {
			return nil, err
		}
		out := make(map[string]bool, len(ts))
		for _, t := range ts {
			if t.RevokedAt.IsZero() {
				out[t.Node] = t.InventoryChecked && t.InventoryMismatch != ""
			}
		}
		return out, nil
	}
}
