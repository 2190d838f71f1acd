package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// CommandKey returns the lease a command with this delivery key acted on, if one did.
func (t *tx) CommandKey(ctx context.Context, key string) (qm.LeaseID, bool, error) {
	var id int64
	err := t.x.GetContext(ctx, &id, t.x.Rebind("SELECT lease_id FROM command_keys WHERE key = ?"), key)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("store: command key: %w", err)
	}
	return qm.LeaseID(id), true, nil
}

// AddCommandKey records that the command with this delivery key acted on lease id. A key seen
// before gives an ECONFLICT error and leaves the transaction usable.
func (t *tx) AddCommandKey(ctx context.Context, key string, id qm.LeaseID, at time.Time) error {
	if err := t.writable(); err != nil {
		return err
	}
	res, err := t.x.ExecContext(ctx, t.x.Rebind("INSERT INTO command_keys (key, lease_id, created_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING"),
		key, int64(id), dbTime(at))
	if err != nil {
		return fmt.Errorf("store: add command key: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return qm.Errorf(qm.ECONFLICT, "command %s was done already", key)
	}
	return nil
}

// PruneCommandKeys forgets the keys of commands made before t (no platform redelivers that
// late) and says how many it forgot.
func (db *DB) PruneCommandKeys(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM command_keys WHERE created_at < ?`), dbTime(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune command keys: %w", err)
	}
	return res.RowsAffected()
}
