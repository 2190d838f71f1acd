package store

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/acme/quartermaster/internal/qm"
)

// SQLX exposes the pool to tests that look at the rows themselves.
func SQLX(db *DB) *sqlx.DB { return db.x }

// MaxTxAttempts is how many times Update runs a retryable transaction.
const MaxTxAttempts = maxTxAttempts

// ExecIn runs a statement inside the transaction of t, a Tx that Update or View handed out.
func ExecIn(ctx context.Context, t qm.Tx, query string, args ...any) error {
	_, err := t.(*tx).x.ExecContext(ctx, query, args...)
	return err
}
