package store

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// SQLiteFile is the file a sqlite: URL names; "" for an in-memory database or another URL.
func SQLiteFile(url string) string {
	if !strings.HasPrefix(url, "sqlite:") {
		return ""
	}
	return sqliteFile(url)
}

// sqliteFile is the file a sqlite: URL names, or "" for an in-memory database.
func sqliteFile(url string) string {
	path := strings.TrimPrefix(url, "sqlite:")
	path = strings.TrimPrefix(path, "//")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	path = strings.TrimPrefix(path, "file:")
	if path == "" || strings.Contains(path, ":memory:") || strings.Contains(url, "mode=memory") {
		return ""
	}
	return path
}

// lockMigrations holds an exclusive lock on a file beside the SQLite database while migrations
// run, so that processes starting together on one file migrate one after the other (the second
// finds the work done). It waits up to migrateLockWait; unlock releases it. In-memory databases,
// private to one process, need no lock.
func (db *DB) lockMigrations(ctx context.Context) (unlock func(), err error) {
	if db.dialect != SQLite {
		return func() {}, nil
	}
	return lockSQLite(ctx, db.file)
}

// lockSQLite takes the lock beside a SQLite file (nothing for "", in memory). Connecting takes it
// too: the first connection to a new file turns on its write-ahead log, which SQLite does not
// wait for when another process does the same at that moment.
func lockSQLite(ctx context.Context, file string) (unlock func(), err error) {
	if file == "" {
		return func() {}, nil
	}
	name := file + ".migrate-lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		// A folder that is missing or not writable: opening the database itself says so.
		return func() {}, nil
	}
	deadline := time.Now().Add(migrateLockWait)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			_ = f.Close()
			return nil, fmt.Errorf("store: the migration lock %s: %w", name, err)
		}
		if time.Now().After(deadline) {
			_ = f.Close()
			return nil, fmt.Errorf("store: another process has held the migration lock %s for %s; is one stuck migrating?", name, migrateLockWait)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("store: waiting for the migration lock %s: %w", name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}
