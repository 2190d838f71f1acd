package store

import (
	"context"
	"fmt"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

var _ qm.UsageStore = (*DB)(nil)

// AddUsage merges hourly rollups into lease_usage_hourly, summing into a row that exists.
func (db *DB) AddUsage(ctx context.Context, rs []qm.UsageRollup) error {
	if len(rs) == 0 {
		return nil
	}
	q := db.x.Rebind(`INSERT INTO lease_usage_hourly (lease_id, hour, gpu_seconds, idle_gpu_seconds, util_sum, samples)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (lease_id, hour) DO UPDATE SET
  gpu_seconds = lease_usage_hourly.gpu_seconds + excluded.gpu_seconds,
  idle_gpu_seconds = lease_usage_hourly.idle_gpu_seconds + excluded.idle_gpu_seconds,
  util_sum = lease_usage_hourly.util_sum + excluded.util_sum,
  samples = lease_usage_hourly.samples + excluded.samples`)
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: add usage: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, r := range rs {
		// Hours start on the policy's clocks; every zone's offset is whole quarters of an hour.
		hour := r.Hour.UTC().Truncate(15 * time.Minute)
		if _, err := tx.ExecContext(ctx, q, int64(r.Lease), dbTime(hour), r.GPUSeconds, r.IdleGPUSeconds, r.UtilSum, r.Samples); err != nil {
			return fmt.Errorf("store: add usage: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: add usage: %w", err)
	}
	return nil
}

// Usage lists the rollups whose hour starts in [from, to), ordered by lease and hour.
func (db *DB) Usage(ctx context.Context, from, to time.Time) ([]qm.UsageRollup, error) {
	rows, err := db.x.QueryContext(ctx, db.x.Rebind(`SELECT lease_id, hour, gpu_seconds, idle_gpu_seconds, util_sum, samples
FROM lease_usage_hourly WHERE hour >= ? AND hour < ? ORDER BY lease_id, hour`), dbTime(from), dbTime(to))
	if err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	defer rows.Close()
	var out []qm.UsageRollup
	for rows.Next() {
		var r qm.UsageRollup
		var id int64
		var hour dbTime
		if err := rows.Scan(&id, &hour, &r.GPUSeconds, &r.IdleGPUSeconds, &r.UtilSum, &r.Samples); err != nil {
			return nil, fmt.Errorf("store: usage: %w", err)
		}
		r.Lease, r.Hour = qm.LeaseID(id), time.Time(hour)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	return out, nil
}
