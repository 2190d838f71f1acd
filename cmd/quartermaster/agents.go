package main

import (
	"context"
	"log/slog"

	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
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
	if p, ok := a.Service.Backend.(podUIDer); ok {
		cfg.PodUIDs = p.PodUIDs
	}
	if a.Service.Telemetry == nil {
		a.Service.Telemetry = ingest.Telemetry{Store: a.Store, Logger: log}
	}
	return ingest.New(cfg)
}
