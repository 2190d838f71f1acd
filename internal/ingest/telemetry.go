package ingest

import (
	"context"
	"log/slog"

	"github.com/acme/quartermaster/internal/qm"
)

// ActivityStore reads what the agents last saw of a lease (*store.DB).
type ActivityStore interface {
	Activity(ctx context.Context, id qm.LeaseID) (qm.Activity, bool, error)
}

// Telemetry is the qm.Telemetry of leases on Slurm and Kubernetes: the activity the ingest
// recorded for the lease, found through its Slurm job id (the lease's Ref) or its pods' UIDs when
// the reports came in. Several replicas read the same rows.
type Telemetry struct {
	Store  ActivityStore
	Logger *slog.Logger
}

var _ qm.Telemetry = Telemetry{}

// Activity is what the node agents last reported of the lease's GPUs; false when no report ever
// covered it (then the idle path flags the lease as unobserved and never reclaims it).
func (t Telemetry) Activity(ctx context.Context, l *qm.Lease) (qm.Activity, bool) {
	a, ok, err := t.Store.Activity(ctx, l.ID)
	if err != nil {
		if t.Logger != nil {
			t.Logger.Error("reading a lease's GPU activity failed", "lease", l.ID, "err", err)
		}
		return qm.Activity{}, false
	}
	return a, ok
}
