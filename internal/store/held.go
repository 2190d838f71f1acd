package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

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

// HeldGPUs sums what the running workspace leases of the classes hold, by class: one row a class
// instead of one a lease, for pools and wait predictions, which need no more.
func (t *tx) HeldGPUs(ctx context.Context, classes []string) (map[string]int, error) {
	if len(classes) == 0 {
		return map[string]int{}, nil
	}
	running := []string{string(qm.Provisioning), string(qm.Active), string(qm.IdleWarned)}
	q, args, err := sqlx.In("SELECT class, SUM(gpus) FROM leases WHERE kind = '' AND state IN (?) AND class IN (?) GROUP BY class", running, classes)
	if err != nil {
		return nil, fmt.Errorf("store: held GPUs: %w", err)
	}
	rows, err := t.x.QueryContext(ctx, t.x.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("store: held GPUs: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var class string
		var n int64
		if err := rows.Scan(&class, &n); err != nil {
			return nil, fmt.Errorf("store: held GPUs: %w", err)
		}
		out[class] = int(n)
	}
	return out, rows.Err()
}

// TeamLeasesAndHeld reads what an admission decides on: the team's leases open at or after since
// (slim, as ListLeases gives them) and what the running workspace leases of the classes hold. On
// PostgreSQL it is one statement (one round trip); on SQLite, two.
func (t *tx) TeamLeasesAndHeld(ctx context.Context, team string, since time.Time, classes []string) ([]*qm.Lease, []qm.Holding, error) {
	if t.db.dialect != Postgres {
		leases, err := t.ListLeases(ctx, qm.LeaseFilter{Kind: qm.AnyKind, Team: team, EndedAfter: since, Slim: true})
		if err != nil {
			return nil, nil, err
		}
		held, err := t.Held(ctx, classes)
		return leases, held, err
	}
	// The team's leases, slim, then the holdings with only what placement reads (the rest NULL
	// or empty, which costs nothing to send or scan).
	q := "SELECT 0 AS part, id, kind, user_name, team, class, gpus, duration_ns, state, node, gpu_index, created_at, started_at, expires_at, ended_at, exclusive, pauses" +
		" FROM leases WHERE team = $1 AND (ended_at IS NULL OR ended_at >= $2)" +
		" UNION ALL SELECT 1, 0, '', '', team, class, gpus, 0, '', node, gpu_index, NULL, NULL, NULL, NULL, exclusive, ''" +
		" FROM leases WHERE kind = '' AND state IN ('" + string(qm.Provisioning) + "', '" + string(qm.Active) + "', '" + string(qm.IdleWarned) + "')" +
		" AND class = ANY($3::text[])"
	rows, err := t.x.QueryContext(ctx, q, team, dbTime(since), pq.Array(classes))
	if err != nil {
		return nil, nil, fmt.Errorf("store: admission read: %w", err)
	}
	defer rows.Close()
	var leases []*qm.Lease
	var held []qm.Holding
	for rows.Next() {
		var part int
		var r leaseRow
		if err := rows.Scan(&part, &r.ID, &r.Kind, &r.User, &r.Team, &r.Class, &r.GPUs, &r.DurationNS, &r.State, &r.Node, &r.GPUIndex,
			&r.CreatedAt, &r.StartedAt, &r.ExpiresAt, &r.EndedAt, &r.Exclusive, &r.Pauses); err != nil {
			return nil, nil, fmt.Errorf("store: admission read: %w", err)
		}
		if part == 0 {
			l, err := r.lease()
			if err != nil {
				return nil, nil, err
			}
			leases = append(leases, l)
			continue
		}
		idx, err := parseGPUIndex(r.GPUIndex)
		if err != nil {
			return nil, nil, fmt.Errorf("store: held: %w", err)
		}
		held = append(held, qm.Holding{Class: r.Class, Team: r.Team, GPUs: r.GPUs, Node: r.Node, GPUIndex: idx, Reserved: r.Exclusive})
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("store: admission read: %w", err)
	}
	// In id order, as ListLeases gives them; sorted here, so the server sorts nothing.
	slices.SortFunc(leases, func(a, b *qm.Lease) int { return cmp.Compare(a.ID, b.ID) })
	return leases, held, nil
}
