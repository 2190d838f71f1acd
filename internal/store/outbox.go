package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/acme/quartermaster/internal/qm"
)

var _ qm.Outbox = (*DB)(nil)

// AddNotices writes notices into the outbox, one row each (each has one recipient). A message that
// concerns no lease (qm.NoticeMessage) is kept under lease 0: those to one recipient go out in
// the order they were written.
func (t *tx) AddNotices(ctx context.Context, ns []qm.Notice, at time.Time) ([]int64, error) {
	if err := t.writable(); err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(ns))
	q := t.x.Rebind(`INSERT INTO outbox (lease_id, recipient, notice, created_at, next_at) VALUES (?, ?, ?, ?, ?) RETURNING id`)
	for _, n := range ns {
		if (n.Lease == nil && n.Kind != qm.NoticeMessage) || len(n.To) != 1 {
			return nil, fmt.Errorf("store: an outbox notice needs a lease and one recipient")
		}
		raw, err := qm.EncodeNotice(n)
		if err != nil {
			return nil, fmt.Errorf("store: add notice: %w", err)
		}
		var id int64
		if err := t.x.QueryRowxContext(ctx, q, int64(n.LeaseID()), n.To[0], string(raw), dbTime(at), dbTime(at)).Scan(&id); err != nil {
			return nil, fmt.Errorf("store: add notice: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// QueuedRecipients lists to whom notices about lease wait to be delivered (unsent rows of the
// outbox), each once, in name order.
func (db *DB) QueuedRecipients(ctx context.Context, lease qm.LeaseID) ([]string, error) {
	var out []string
	err := db.x.SelectContext(ctx, &out, db.x.Rebind(
		`SELECT DISTINCT recipient FROM outbox WHERE lease_id = ? AND sent_at IS NULL ORDER BY recipient`), int64(lease))
	if err != nil {
		return nil, fmt.Errorf("store: queued recipients of %s: %w", lease, err)
	}
	return out, nil
}

// claimable is the condition for a row a sender may claim at ? (now): unsent, due, not held by a
// live claim, and the oldest unsent row of its lease and recipient.
const claimable = `o.sent_at IS NULL AND o.next_at <= ? AND (o.claimed_until IS NULL OR o.claimed_until < ?)
  AND o.id = (SELECT min(p.id) FROM outbox p WHERE p.lease_id = o.lease_id AND p.recipient = o.recipient AND p.sent_at IS NULL)`

// ClaimNotices claims up to limit due notices for owner until now+hold. On PostgreSQL the rows
// are locked with FOR UPDATE SKIP LOCKED, so senders on several replicas take different rows; on
// SQLite the one writer makes the claim atomic.
func (db *DB) ClaimNotices(ctx context.Context, owner string, ids []int64, now time.Time, limit int, hold time.Duration) ([]qm.QueuedNotice, error) {
	x, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: claim notices: %w", err)
	}
	defer func() { _ = x.Rollback() }()
	where := claimable
	args := []any{dbTime(now), dbTime(now)}
	if len(ids) > 0 {
		where += " AND o.id IN (?)"
		args = append(args, ids)
	}
	sel := "SELECT o.id, o.notice, o.attempts, o.claimed_until IS NOT NULL AS again, o.created_at FROM outbox o WHERE " + where + " ORDER BY o.id LIMIT ?"
	args = append(args, limit)
	if db.dialect == Postgres {
		sel += " FOR UPDATE SKIP LOCKED"
	}
	q, qargs, err := sqlx.In(sel, args...)
	if err != nil {
		return nil, fmt.Errorf("store: claim notices: %w", err)
	}
	rows, err := x.QueryxContext(ctx, x.Rebind(q), qargs...)
	if err != nil {
		return nil, fmt.Errorf("store: claim notices: %w", err)
	}
	var out []qm.QueuedNotice
	var claimed []int64
	for rows.Next() {
		var id int64
		var raw string
		var attempts int
		var again bool
		var queued dbTime
		if err := rows.Scan(&id, &raw, &attempts, &again, &queued); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: claim notices: %w", err)
		}
		n, err := qm.DecodeNotice([]byte(raw))
		if err != nil {
			db.logger.Error("an outbox row cannot be read; it is set aside", "outbox", id, "err", err)
			continue
		}
		out = append(out, qm.QueuedNotice{ID: id, Notice: n, Attempts: attempts + 1, Again: again, Queued: time.Time(queued)})
		claimed = append(claimed, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: claim notices: %w", err)
	}
	if len(claimed) == 0 {
		return nil, nil
	}
	if _, err := execIn(ctx, x, "UPDATE outbox SET claimed_by = ?, claimed_until = ?, attempts = attempts + 1 WHERE id IN (?)", owner, dbTime(now.Add(hold)), claimed); err != nil {
		return nil, fmt.Errorf("store: claim notices: %w", err)
	}
	if err := x.Commit(); err != nil {
		return nil, fmt.Errorf("store: claim notices: %w", err)
	}
	return out, nil
}

// NoticeSent marks a notice delivered.
func (db *DB) NoticeSent(ctx context.Context, id int64, at time.Time) error {
	_, err := db.x.ExecContext(ctx, db.x.Rebind("UPDATE outbox SET sent_at = ?, claimed_until = NULL WHERE id = ?"), dbTime(at), id)
	if err != nil {
		return fmt.Errorf("store: notice sent: %w", err)
	}
	return nil
}

// NoticeFailed gives a notice back to be tried at retryAt.
func (db *DB) NoticeFailed(ctx context.Context, id int64, retryAt time.Time, reason string) error {
	if len(reason) > 500 {
		reason = reason[:500]
	}
	_, err := db.x.ExecContext(ctx, db.x.Rebind("UPDATE outbox SET claimed_until = NULL, claimed_by = '', next_at = ?, last_error = ? WHERE id = ?"),
		dbTime(retryAt), strings.ToValidUTF8(reason, "?"), id)
	if err != nil {
		return fmt.Errorf("store: notice failed: %w", err)
	}
	return nil
}

// OutboxLag says how many notices wait to be sent and how long the oldest has waited.
func (db *DB) OutboxLag(ctx context.Context, now time.Time) (pending int, oldest time.Duration, err error) {
	var first dbTime
	row := db.x.QueryRowxContext(ctx, "SELECT count(*), min(created_at) FROM outbox WHERE sent_at IS NULL")
	if err := row.Scan(&pending, &first); err != nil {
		return 0, 0, fmt.Errorf("store: outbox lag: %w", err)
	}
	if t := time.Time(first); !t.IsZero() {
		oldest = now.Sub(t)
	}
	return pending, oldest, nil
}

// PruneOutbox forgets notices sent before t and says how many it forgot.
func (db *DB) PruneOutbox(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.x.ExecContext(ctx, db.x.Rebind("DELETE FROM outbox WHERE sent_at IS NOT NULL AND sent_at < ?"), dbTime(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune outbox: %w", err)
	}
	return res.RowsAffected()
}

// NoticeClaimers names the senders that hold live claims at now.
func (db *DB) NoticeClaimers(ctx context.Context, now time.Time) ([]string, error) {
	var owners []string
	err := db.x.SelectContext(ctx, &owners, db.x.Rebind("SELECT DISTINCT claimed_by FROM outbox WHERE sent_at IS NULL AND claimed_until >= ? ORDER BY claimed_by"), dbTime(now))
	if err != nil {
		return nil, fmt.Errorf("store: notice claimers: %w", err)
	}
	return owners, nil
}

// ReleaseNoticeClaims ends at once the live claims of owners (senders known to have stopped), as
// if they had lapsed: the next sender takes their notices and counts each as a possible repeat.
func (db *DB) ReleaseNoticeClaims(ctx context.Context, owners []string, now time.Time) (int64, error) {
	if len(owners) == 0 {
		return 0, nil
	}
	res, err := execIn(ctx, db.x, "UPDATE outbox SET claimed_until = ? WHERE sent_at IS NULL AND claimed_until >= ? AND claimed_by IN (?)",
		dbTime(now.Add(-time.Second)), dbTime(now), owners)
	if err != nil {
		return 0, fmt.Errorf("store: release notice claims: %w", err)
	}
	return res.RowsAffected()
}
