package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acme/quartermaster/internal/qm"
)

// eventValues appends the events' columns as rows of a VALUES list, numbered from len(args)+1 and
// cast to the columns' types (a VALUES list in a SELECT has none of its own), each row led by its
// position so the rows are inserted in order.
func eventValues(b *strings.Builder, args []any, es []*qm.Event) []any {
	for i, e := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(b, "(%d, $%d::timestamptz, $%d::text, $%d::text, $%d::text, $%d::text)", i, n+1, n+2, n+3, n+4, n+5)
		args = append(args, dbTime(e.At), e.Actor, string(e.From), string(e.To), e.Reason)
	}
	return args
}

// insertEventsFrom is the tail of a statement whose first part, the CTE named src, yields the
// lease's id (or nothing, which inserts nothing).
const insertEventsFrom = ` INSERT INTO lease_events (lease_id, at, actor, from_state, to_state, reason)
 SELECT src.id, e.at, e.actor, e.from_state, e.to_state, e.reason FROM src CROSS JOIN (VALUES `

// setEventIDs gives the events their ids, which were assigned in the order the rows went in.
func setEventIDs(es []*qm.Event, lease qm.LeaseID, ids []int64) {
	slices.Sort(ids)
	for i, e := range es {
		e.Lease = lease
		if i < len(ids) {
			e.ID = ids[i]
		}
	}
}

// CreateLeaseWithEvents inserts l and its first events, which get l's new id. On PostgreSQL that
// is one statement (one round trip); on SQLite, two.
func (t *tx) CreateLeaseWithEvents(ctx context.Context, l *qm.Lease, es []*qm.Event) error {
	if t.db.dialect != Postgres || len(es) == 0 {
		if err := t.CreateLease(ctx, l); err != nil {
			return err
		}
		for _, e := range es {
			e.Lease = l.ID
		}
		return t.AddEvents(ctx, es)
	}
	if err := t.writable(); err != nil {
		return err
	}
	q, args, err := t.x.BindNamed(insertLeaseSQL, toLeaseRow(l))
	if err != nil {
		return fmt.Errorf("store: create lease: %w", err)
	}
	var b strings.Builder
	b.WriteString("WITH src AS (")
	b.WriteString(q)
	b.WriteString(")")
	b.WriteString(insertEventsFrom)
	args = eventValues(&b, args, es)
	b.WriteString(") AS e(n, at, actor, from_state, to_state, reason) ORDER BY e.n RETURNING lease_id, id")
	lease, ids, err := t.leaseAndEventIDs(ctx, b.String(), args)
	switch {
	case isUniqueViolation(err):
		return conflictKey(l.RequestKey)
	case err != nil:
		return fmt.Errorf("store: create lease: %w", err)
	case len(ids) == 0: // ON CONFLICT DO NOTHING: the request key made a lease before
		return conflictKey(l.RequestKey)
	}
	l.ID = qm.LeaseID(lease)
	setEventIDs(es, l.ID, ids)
	return nil
}

// UpdateLeaseWithEvent is UpdateLease followed by AddEvent for e (whose Lease is l.ID). On
// PostgreSQL a successful one is one statement (one round trip); on SQLite, two.
func (t *tx) UpdateLeaseWithEvent(ctx context.Context, l *qm.Lease, from qm.State, e *qm.Event) error {
	if t.db.dialect != Postgres {
		if err := t.UpdateLease(ctx, l, from); err != nil {
			return err
		}
		return t.AddEvent(ctx, e)
	}
	if err := t.writable(); err != nil {
		return err
	}
	arg := updateArg(l, from)
	q, args, err := t.x.BindNamed(updateLeaseSQL+" RETURNING id", arg)
	if err != nil {
		return fmt.Errorf("store: update lease: %w", err)
	}
	var b strings.Builder
	b.WriteString("WITH src AS (")
	b.WriteString(q)
	b.WriteString(")")
	b.WriteString(insertEventsFrom)
	args = eventValues(&b, args, []*qm.Event{e})
	b.WriteString(") AS e(n, at, actor, from_state, to_state, reason) RETURNING lease_id, id")
	_, ids, err := t.leaseAndEventIDs(ctx, b.String(), args)
	switch {
	case isUniqueViolation(err):
		return conflictKey(l.RequestKey)
	case err != nil:
		return fmt.Errorf("store: update lease %s: %w", l.ID, err)
	case len(ids) == 0: // no row matched: gone, or its state moved on
		var exists int
		if err := t.x.GetContext(ctx, &exists, "SELECT COUNT(*) FROM leases WHERE id = $1", int64(l.ID)); err != nil {
			return fmt.Errorf("store: update lease %s: %w", l.ID, err)
		}
		if exists == 0 {
			return qm.ErrNotFound
		}
		return qm.ErrStale
	}
	e.ID = ids[0]
	return nil
}

// leaseAndEventIDs runs a statement returning (lease_id, id) rows.
func (t *tx) leaseAndEventIDs(ctx context.Context, q string, args []any) (lease int64, ids []int64, err error) {
	rows, err := t.x.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&lease, &id); err != nil {
			return 0, nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, nil, err
	}
	return lease, ids, nil
}
