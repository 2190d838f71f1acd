package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/acme/quartermaster/internal/qm"
)

// Held lists the GPUs that running workspace leases of the given classes hold. It reads six
// columns and no times, because admission calls it for every grant under the class lock.
func (t *tx) Held(ctx context.Context, classes []string) ([]qm.Holding, error) {
	if len(classes) == 0 {
		return nil, nil
	}
	running := []string{string(qm.Provisioning), string(qm.Active), string(qm.IdleWarned)}
	q, args, err := sqlx.In("SELECT class, team, gpus, node, gpu_index, exclusive FROM leases WHERE kind = '' AND state IN (?) AND class IN (?)", running, classes)
	if err != nil {
		return nil, fmt.Errorf("store: held: %w", err)
	}
	rows, err := t.x.QueryContext(ctx, t.x.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("store: held: %w", err)
	}
	defer rows.Close()
	var out []qm.Holding
	for rows.Next() {
		var h qm.Holding
		var idx string
		if err := rows.Scan(&h.Class, &h.Team, &h.GPUs, &h.Node, &idx, &h.Reserved); err != nil {
			return nil, fmt.Errorf("store: held: %w", err)
		}
		if h.GPUIndex, err = parseGPUIndex(idx); err != nil {
			return nil, fmt.Errorf("store: held: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
