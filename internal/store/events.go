package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// eventRow is a row of lease_events.
type eventRow struct {
	ID     int64  `db:"id"`
	Lease  int64  `db:"lease_id"`
	At     dbTime `db:"at"`
	Actor  string `db:"actor"`
	From   string `db:"from_state"`
	To     string `db:"to_state"`
	Reason string `db:"reason"`
}

// AddEvent appends e to its lease's audit trail and sets e.ID. An event for a lease that does not
// exist gives qm.ErrNotFound.
func (t *tx) AddEvent(ctx context.Context, e *qm.Event) error {
	if err := t.writable(); err != nil {
		return err
	}
	r := eventRow{Lease: int64(e.Lease), At: dbTime(e.At), Actor: e.Actor, From: string(e.From), To: string(e.To), Reason: e.Reason}
	q, args, err := t.x.BindNamed(`INSERT INTO lease_events (lease_id, at, actor, from_state, to_state, reason)
		VALUES (:lease_id, :at, :actor, :from_state, :to_state, :reason) RETURNING id`, r)
	if err != nil {
		return fmt.Errorf("store: add event: %w", err)
	}
	var id int64
	err = t.x.QueryRowxContext(ctx, q, args...).Scan(&id)
	if isForeignKeyViolation(err) {
		return qm.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store: add event to lease %s: %w", e.Lease, err)
	}
	e.ID = id
	return nil
}

// AddEvents appends events in order with one statement.
func (t *tx) AddEvents(ctx context.Context, es []*qm.Event) error {
	if err := t.writable(); err != nil {
		return err
	}
	if len(es) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("INSERT INTO lease_events (lease_id, at, actor, from_state, to_state, reason) VALUES ")
	args := make([]any, 0, 6*len(es))
	for i, e := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?)")
		args = append(args, int64(e.Lease), dbTime(e.At), e.Actor, string(e.From), string(e.To), e.Reason)
	}
	b.WriteString(" RETURNING id")
	rows, err := t.x.QueryxContext(ctx, t.x.Rebind(b.String()), args...)
	if isForeignKeyViolation(err) {
		return qm.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store: add events: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("store: add events: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		if isForeignKeyViolation(err) {
			return qm.ErrNotFound
		}
		return fmt.Errorf("store: add events: %w", err)
	}
	// RETURNING gives no order guarantee; ids are assigned in VALUES order, so sort them.
	slices.Sort(ids)
	for i := range es {
		if i < len(ids) {
			es[i].ID = ids[i]
		}
	}
	return nil
}

// Events lists a lease's audit trail in the order it was written; none for an unknown lease.
func (t *tx) Events(ctx context.Context, id qm.LeaseID) ([]*qm.Event, error) {
	var rows []eventRow
	err := t.x.SelectContext(ctx, &rows, t.x.Rebind(
		`SELECT id, lease_id, at, actor, from_state, to_state, reason FROM lease_events WHERE lease_id = ? ORDER BY id`), int64(id))
	if err != nil {
		return nil, fmt.Errorf("store: events of lease %s: %w", id, err)
	}
	out := make([]*qm.Event, len(rows))
	for i, r := range rows {
		out[i] = &qm.Event{
			ID:     r.ID,
			Lease:  qm.LeaseID(r.Lease),
			At:     time.Time(r.At),
			Actor:  r.Actor,
			From:   qm.State(r.From),
			To:     qm.State(r.To),
			Reason: r.Reason,
		}
	}
	return out, nil
}
