package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Delivery is a chat command a process acknowledged and has not finished: what the chat
// adapter needs to run it again (Payload, its own encoding) and when it arrived.
type Delivery struct {
	Key        string
	Platform   string
	Payload    string
	ReceivedAt time.Time
}

type deliveryRow struct {
	Key        string `db:"key"`
	Platform   string `db:"platform"`
	Payload    string `db:"payload"`
	ReceivedAt dbTime `db:"received_at"`
}

// AcceptDeliveries keeps deliveries that are being acknowledged, each claimed by owner (the
// process, as host/pid) until its arrival + claim, in one statement. kept[i] is false, and
// nothing is kept for ds[i], when a delivery with the same key is kept already (a repeat,
// perhaps to another replica, or twice in ds).
func (db *DB) AcceptDeliveries(ctx context.Context, ds []Delivery, owner string, claim time.Duration) (kept []bool, err error) {
	if len(ds) == 0 {
		return nil, nil
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO inbox (key, platform, payload, received_at, claimed_until, claimed_by) VALUES `)
	args := make([]any, 0, 6*len(ds))
	for i, d := range ds {
		if d.Key == "" || d.Platform == "" {
			return nil, fmt.Errorf("store: a delivery needs a key and a platform")
		}
		if d.ReceivedAt.IsZero() {
			d.ReceivedAt = time.Now()
		}
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?, ?, ?)")
		args = append(args, d.Key, d.Platform, d.Payload, dbTime(d.ReceivedAt), dbTime(d.ReceivedAt.Add(claim)), owner)
	}
	q.WriteString(" ON CONFLICT (key) DO NOTHING RETURNING key")
	var inserted []string
	if err := db.x.SelectContext(ctx, &inserted, db.x.Rebind(q.String()), args...); err != nil {
		return nil, fmt.Errorf("store: accept %d deliveries: %w", len(ds), err)
	}
	fresh := make(map[string]bool, len(inserted))
	for _, k := range inserted {
		fresh[k] = true
	}
	kept = make([]bool, len(ds))
	for i, d := range ds {
		kept[i] = fresh[d.Key]
		delete(fresh, d.Key) // the same key twice: only the first is kept
	}
	return kept, nil
}

// FinishDeliveries forgets deliveries whose work is done, in one statement. A key that is not
// kept is not an error.
func (db *DB) FinishDeliveries(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := execIn(ctx, db.x, `DELETE FROM inbox WHERE key IN (?)`, keys); err != nil {
		return fmt.Errorf("store: finish %d deliveries: %w", len(keys), err)
	}
	return nil
}

// ClaimDeliveries claims for owner, until now + claim, up to limit deliveries of platform whose
// claim ran out before now (the process that had them stopped), oldest first. Each is claimed
// by one caller only, however many ask at once.
func (db *DB) ClaimDeliveries(ctx context.Context, platform, owner string, now time.Time, claim time.Duration, limit int) ([]Delivery, error) {
	var rows []deliveryRow
	err := db.x.SelectContext(ctx, &rows, db.x.Rebind(`SELECT key, platform, payload, received_at FROM inbox
		WHERE platform = ? AND claimed_until < ? ORDER BY received_at, key LIMIT ?`), platform, dbTime(now), limit)
	if err != nil {
		return nil, fmt.Errorf("store: deliveries to claim: %w", err)
	}
	var out []Delivery
	for _, r := range rows {
		res, err := db.x.ExecContext(ctx, db.x.Rebind(`UPDATE inbox SET claimed_until = ?, claimed_by = ? WHERE key = ? AND claimed_until < ?`),
			dbTime(now.Add(claim)), owner, r.Key, dbTime(now))
		if err != nil {
			return out, fmt.Errorf("store: claim delivery %s: %w", r.Key, err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			out = append(out, Delivery{Key: r.Key, Platform: r.Platform, Payload: r.Payload, ReceivedAt: time.Time(r.ReceivedAt)})
		}
	}
	return out, nil
}

// DeliveryClaimers are the processes whose claims on deliveries of platform still hold at now.
func (db *DB) DeliveryClaimers(ctx context.Context, platform string, now time.Time) ([]string, error) {
	var owners []string
	err := db.x.SelectContext(ctx, &owners, db.x.Rebind(`SELECT DISTINCT claimed_by FROM inbox
		WHERE platform = ? AND claimed_until >= ? AND claimed_by <> '' ORDER BY claimed_by`), platform, dbTime(now))
	if err != nil {
		return nil, fmt.Errorf("store: inbox claimers: %w", err)
	}
	return owners, nil
}

// ReleaseDeliveryClaims ends the claims that the owners (processes known to have stopped) hold
// on deliveries of platform, so that the next ClaimDeliveries takes them at once, and says how
// many it released.
func (db *DB) ReleaseDeliveryClaims(ctx context.Context, platform string, owners []string) (int64, error) {
	if len(owners) == 0 {
		return 0, nil
	}
	res, err := execIn(ctx, db.x, `UPDATE inbox SET claimed_until = received_at, claimed_by = '' WHERE platform = ? AND claimed_by IN (?)`, platform, owners)
	if err != nil {
		return 0, fmt.Errorf("store: release inbox claims: %w", err)
	}
	return res.RowsAffected()
}
