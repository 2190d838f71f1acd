package store

import (
	"context"
	"fmt"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// SimUtilization is the GPU utilization the console last set for a lease on the simulated
// cluster: Utilization from At on, its GPUs last busy at LastActive.
type SimUtilization struct {
	Lease       qm.LeaseID
	Utilization float64
	At          time.Time
	LastActive  time.Time
}

// SetSimUtilization keeps the utilization last set for a lease, replacing the one before.
func (db *DB) SetSimUtilization(ctx context.Context, u SimUtilization) error {
	if _, err := db.x.ExecContext(ctx, db.x.Rebind(`INSERT INTO sim_utilization (lease_id, utilization, set_at, last_active_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (lease_id) DO UPDATE SET utilization = excluded.utilization, set_at = excluded.set_at, last_active_at = excluded.last_active_at`),
		int64(u.Lease), u.Utilization, dbTime(u.At), dbTime(u.LastActive)); err != nil {
		return fmt.Errorf("store: simulated utilization: %w", err)
	}
	return nil
}

// SimUtilizations lists the utilization last set for each lease that has not ended.
func (db *DB) SimUtilizations(ctx context.Context) ([]SimUtilization, error) {
	var rows []struct {
		Lease       int64   `db:"lease_id"`
		Utilization float64 `db:"utilization"`
		At          dbTime  `db:"set_at"`
		LastActive  dbTime  `db:"last_active_at"`
	}
	if err := db.x.SelectContext(ctx, &rows, `SELECT u.lease_id, u.utilization, u.set_at, u.last_active_at
		FROM sim_utilization u JOIN leases l ON l.id = u.lease_id WHERE l.ended_at IS NULL ORDER BY u.lease_id`); err != nil {
		return nil, fmt.Errorf("store: simulated utilization: %w", err)
	}
	out := make([]SimUtilization, 0, len(rows))
	for _, r := range rows {
		out = append(out, SimUtilization{Lease: qm.LeaseID(r.Lease), Utilization: r.Utilization, At: time.Time(r.At), LastActive: time.Time(r.LastActive)})
	}
	return out, nil
}

// SimCPUJobRefs are the references of the simulated cluster's CPU-only jobs (sim:cpu:…) that the
// leases on this database hold, ended ones too, so that a cluster started again on it numbers its
// new jobs after them.
func (db *DB) SimCPUJobRefs(ctx context.Context) ([]string, error) {
	var refs []string
	if err := db.x.SelectContext(ctx, &refs, `SELECT ref FROM leases WHERE ref LIKE 'sim:cpu:%'`); err != nil {
		return nil, fmt.Errorf("store: simulated CPU-only jobs: %w", err)
	}
	return refs, nil
}

// SimClock is where a console's simulated clock last stood on this database (NoteClock); zero
// when no console ran on it.
func (db *DB) SimClock(ctx context.Context) (time.Time, error) {
	var ts []dbTime
	if err := db.x.SelectContext(ctx, &ts, `SELECT at FROM sim_clock`); err != nil {
		return time.Time{}, fmt.Errorf("store: simulated clock: %w", err)
	}
	if len(ts) == 0 {
		return time.Time{}, nil
	}
	return time.Time(ts[0]), nil
}
