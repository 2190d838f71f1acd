package store

import "github.com/jmoiron/sqlx"

// SQLX exposes the pool to tests that look at the rows themselves.
func SQLX(db *DB) *sqlx.DB { return db.x }

// MaxTxAttempts is how many times Update runs a retryable transaction.
const MaxTxAttempts = maxTxAttempts
