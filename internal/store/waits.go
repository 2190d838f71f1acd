package store

import (
	"context"
	"fmt"
	"time"
)

// AddWaitRecord keeps one record of the queue-wait predictor's history for class, made at at.
// The record is the predictor's own (internal/waits writes JSON); the store does not read it.
func (db *DB) AddWaitRecord(ctx context.Context, class string, at time.Time, record []byte) error {
	_, err := db.x.ExecContext(ctx, db.x.Rebind(`INSERT INTO wait_records (class, at, record) VALUES (?, ?, ?)`),
		class, dbTime(at), string(record))
	if err != nil {
		return fmt.Errorf("store: add wait record: %w", err)
	}
	return nil
}

// WaitRecords calls each with every record made at or after since (all of them for a zero since),
// in the order they were added, and stops at the first error each returns.
func (db *DB) WaitRecords(ctx context.Context, since time.Time, each func(class string, record []byte) error) error {
	if since.IsZero() {
		since = time.Unix(0, 0) // every record (a zero time is NULL to the database)
	}
	rows, err := db.x.QueryContext(ctx, db.x.Rebind(`SELECT class, record FROM wait_records WHERE at >= ? ORDER BY id`), dbTime(since))
	if err != nil {
		return fmt.Errorf("store: wait records: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var class, record string
		if err := rows.Scan(&class, &record); err != nil {
			return fmt.Errorf("store: wait records: %w", err)
		}
		if err := each(class, []byte(record)); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: wait records: %w", err)
	}
	return nil
}

// PruneWaitRecords forgets the records made before t and says how many it forgot.
func (db *DB) PruneWaitRecords(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM wait_records WHERE at < ?`), dbTime(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune wait records: %w", err)
	}
	return res.RowsAffected()
}
