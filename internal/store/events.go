package store

import (
	"context"
	"fmt"
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
