// Package store persists Quartermaster's domain in PostgreSQL or SQLite. It implements qm.Store with
// one body of sqlx code for both databases (queries are written with ? and rebound), owns the schema
// migrations in migrations/, and is the only package that imports sqlx, lib/pq, modernc.org/sqlite
// and goose, so the database layer can be swapped without touching the domain.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"    // the "postgres" driver
	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/acme/quartermaster/internal/qm"
)

// Dialects a DB speaks, as reported by DB.Dialect.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// Defaults.
const (
	// DefaultPostgresMaxConns bounds the PostgreSQL pool; every Update waiting on a lock holds one.
	DefaultPostgresMaxConns = 10
	// sqliteBusyTimeoutMS is how long a write waits for another process's write lock on the file.
	sqliteBusyTimeoutMS = 5000
	// DefaultBeginWait is how long a transaction on PostgreSQL waits for the server to answer
	// BEGIN before it fails with qm.ErrUnavailable (and, for a while after the database was found
	// unreachable, for a pooled connection too): while the database is down or hung every command
	// says so within it instead of waiting on timeouts meant for slow statements. Once a
	// transaction has begun, the statement timeout bounds it.
	DefaultBeginWait = 2 * time.Second
	// maxTxAttempts is how many times Update runs a PostgreSQL transaction that keeps failing with a
	// serialization failure or a deadlock.
	maxTxAttempts = 4
)

func init() {
	sqlx.BindDriver("sqlite", sqlx.QUESTION)
}

// DB is a qm.Store over PostgreSQL or SQLite.
type DB struct {
	x       *sqlx.DB
	dialect string
	file    string // the SQLite file; "" in memory and on PostgreSQL
	logger  *slog.Logger

	// beginWait bounds how long a transaction waits for the server's answer to BEGIN on
	// PostgreSQL (see begin and SetBeginWait); unreachableAt is when a statement last found the
	// database unreachable (UnixNano; 0: never).
	beginWait     time.Duration
	unreachableAt atomic.Int64
	probing       atomic.Bool // a transaction is finding out whether the database is back

	// sent counts what the PostgreSQL connections sent the server: round trips (RoundTrips).
	sent *atomic.Int64

	closeOnce sync.Once
	closeErr  error
	jobLocks  jobLocks // connections holding scheduled jobs' locks, closed with the DB
}

var _ qm.Store = (*DB)(nil)

// Open connects to the database named by url, checks that it answers, and applies the migrations
// not yet applied. url is postgres://… (or postgresql://…), sqlite:PATH, or sqlite::memory: for a
// private in-memory database that lives as long as the DB. logger may be nil.
func Open(ctx context.Context, url string, logger *slog.Logger) (*DB, error) {
	db, err := Connect(ctx, url, logger)
	if err != nil {
		return nil, err
	}
	// A private in-memory database starts as a copy of the first one this process migrated, which
	// has every migration this binary knows: nothing is left to apply (memimage.go).
	if plainMemory(url) && db.restoreMemoryImage(ctx) {
		return db, nil
	}
	if err := db.Migrate(ctx); err != nil {
		_ = db.Close()
		return nil, scrub(url, err)
	}
	if plainMemory(url) {
		db.saveMemoryImage(ctx)
	}
	return db, nil
}

// Connect is Open without migrating, for tools that manage the schema themselves (migrate down,
// migrate status).
func Connect(ctx context.Context, url string, logger *slog.Logger) (*DB, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dialect, driver, dsn, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	var x *sqlx.DB
	sent := new(atomic.Int64)
	if dialect == Postgres {
		sdb, err := openPostgres(withTimeouts(dsn), sent)
		if err != nil {
			err = urlFault(withTimeouts(dsn), func(u string) error { _, err := pq.NewConnector(u); return err })
			return nil, fmt.Errorf("store: open %s: %w", dialect, scrub(url, err))
		}
		x = sqlx.NewDb(sdb, driver)
	} else if x, err = sqlx.Open(driver, dsn); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dialect, scrub(url, err))
	}
	switch dialect {
	case SQLite:
		// One connection: writers are serialized in the process (no SQLITE_BUSY between our own
		// goroutines), and ":memory:" stays one database. It must never be closed while idle.
		x.SetMaxOpenConns(1)
		x.SetMaxIdleConns(1)
		x.SetConnMaxLifetime(0)
		x.SetConnMaxIdleTime(0)
	case Postgres:
		x.SetMaxOpenConns(DefaultPostgresMaxConns)
		x.SetMaxIdleConns(DefaultPostgresMaxConns)
		x.SetConnMaxIdleTime(5 * time.Minute)
	}
	db := &DB{x: x, dialect: dialect, logger: logger.With("store", dialect), beginWait: DefaultBeginWait, sent: sent}
	if dialect == SQLite {
		db.file = sqliteFile(url)
	}
	unlock, err := lockSQLite(ctx, db.file)
	if err != nil {
		_ = x.Close()
		return nil, err
	}
	err = x.PingContext(ctx)
	unlock()
	if err != nil {
		_ = x.Close()
		if dialect == SQLite && db.file != "" {
			if dir := filepath.Dir(db.file); !isDir(dir) {
				return nil, fmt.Errorf("store: the SQLite file %s cannot be created: the directory %s does not exist; create it (mkdir -p %s), or name a file in a directory that exists, e.g. sqlite:%s",
					db.file, dir, dir, filepath.Join(SQLiteDirInstead(dir), filepath.Base(db.file)))
			}
			if isDir(db.file) {
				return nil, fmt.Errorf("store: the SQLite file %s is a directory; name a file in it, e.g. sqlite:%s", db.file, filepath.Join(db.file, "quartermaster.db"))
			}
			if refusal := sqliteNotWritable(db.file); refusal != nil {
				return nil, refusal
			}
		}
		return nil, fmt.Errorf("store: connect to %s: %w", dialect, scrub(url, err))
	}
	if dialect == Postgres {
		if err := checkSchema(ctx, x); err != nil {
			_ = x.Close()
			return nil, err
		}
	}
	return db, nil
}

// checkSchema refuses a PostgreSQL connection whose search_path names no schema that exists (a
// scratch schema not created yet, a typo in ?search_path=): tables would have nowhere to go, and
// the migrations would fail on a relation that does not exist.
func checkSchema(ctx context.Context, x *sqlx.DB) error {
	var schema sql.NullString
	var path, database string
	if err := x.QueryRowxContext(ctx, "SELECT current_schema(), current_setting('search_path'), current_database()").Scan(&schema, &path, &database); err != nil {
		return fmt.Errorf("store: connect to %s: %w", Postgres, err)
	}
	if schema.Valid {
		return nil
	}
	first := strings.TrimSpace(strings.Split(path, ",")[0])
	if strings.Trim(first, `"`) == "$user" || first == "" {
		first = "quartermaster"
	}
	return fmt.Errorf("store: the search_path %s names no schema of the PostgreSQL database %s; create it (CREATE SCHEMA %s) or name one that exists", path, database, first)
}

// SetBeginWait sets how long a transaction on PostgreSQL waits to begin before it fails with
// qm.ErrUnavailable; zero or less restores DefaultBeginWait. Call it before the DB is used.
func (db *DB) SetBeginWait(d time.Duration) {
	if d <= 0 {
		d = DefaultBeginWait
	}
	db.beginWait = d
}

// parseURL maps a store URL to a dialect, a database/sql driver name and that driver's DSN.
func parseURL(url string) (dialect, driver, dsn string, err error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return Postgres, "postgres", withBinaryParameters(url), nil
	case strings.HasPrefix(url, "sqlite:"):
		path := strings.TrimPrefix(url, "sqlite:")
		path = strings.TrimPrefix(path, "//") // sqlite:///var/lib/qm.db
		var extra string
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path, extra = path[:i], path[i+1:]
		}
		if path == "" {
			return "", "", "", fmt.Errorf("store: %q names no SQLite file (use sqlite:PATH or sqlite::memory:)", redact(url))
		}
		// _txlock=immediate makes every write transaction BEGIN IMMEDIATE: it takes the write lock
		// up front (waiting up to busy_timeout), so a transaction never fails half-way when it first
		// writes. Read-only transactions stay deferred.
		q := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_time_format=sqlite&_txlock=immediate", sqliteBusyTimeoutMS)
		if extra != "" {
			q += "&" + extra
		}
		return SQLite, "sqlite", "file:" + path + "?" + q, nil
	}
	return "", "", "", fmt.Errorf("store: unsupported database URL %q: want postgres://… or sqlite:PATH", redact(url))
}

// withBinaryParameters turns on lib/pq's binary_parameters unless the URL says otherwise: a query
// with arguments then costs one round trip instead of two (no separate prepare step).
func withBinaryParameters(url string) string {
	if strings.Contains(url, "binary_parameters=") {
		return url
	}
	if strings.Contains(url, "?") {
		return url + "&binary_parameters=yes"
	}
	return url + "?binary_parameters=yes"
}

// RoundTrips is how many times this DB's connections have sent PostgreSQL something and waited
// for its answer (connecting included); zero on SQLite. The difference across an operation is
// what it costs in round trips.
func (db *DB) RoundTrips() int64 { return db.sent.Load() }

// Ping checks that the database answers a query now (readiness checks).
func (db *DB) Ping(ctx context.Context) error {
	if db.file != "" {
		// The open connection keeps a deleted or moved file alive; what it writes would be lost.
		if _, err := os.Stat(db.file); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the SQLite file %s is gone (deleted or moved away while the service runs); put it back, or restart the service on the file it should use", db.file)
		} else if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("the SQLite file %s cannot be looked at (%v)", db.file, err)
		}
	}
	var one int
	if err := db.x.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		// Said for a person reading /readyz: the address nothing listens at, not the dial's chain.
		var op *net.OpError
		if errors.Is(err, syscall.ECONNREFUSED) && errors.As(err, &op) && op.Addr != nil {
			return fmt.Errorf("%s does not answer: nothing accepts connections at %s", db.dialect, op.Addr)
		}
		return fmt.Errorf("%s does not answer: %w", db.dialect, err)
	}
	return nil
}

// Dialect is Postgres or SQLite.
func (db *DB) Dialect() string { return db.dialect }

// SerialWriters reports whether the store runs one write transaction at a time whatever its locks
// (SQLite: one connection, BEGIN IMMEDIATE), rather than only serializing those that share a lock.
func (db *DB) SerialWriters() bool { return db.dialect == SQLite }

// Close closes the pool; closing twice is harmless.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.jobLocks.closeAll()
		db.closeErr = db.x.Close()
	})
	return db.closeErr
}

// execIn runs a statement whose ? placeholders may take a slice (a list for IN (?)), written
// for ex's database.
func execIn(ctx context.Context, ex sqlx.ExtContext, query string, args ...any) (sql.Result, error) {
	q, qargs, err := sqlx.In(query, args...)
	if err != nil {
		return nil, err
	}
	return ex.ExecContext(ctx, ex.Rebind(q), qargs...)
}

func isDir(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.IsDir()
}

// InstalledDataDirs is where an installed host keeps its SQLite file (docs/operations.md).
var InstalledDataDirs = []string{"/var/lib/quartermaster/data"}

// SQLiteDirInstead is where a SQLite file goes whose directory dir does not exist: the nearest
// directory above dir that exists, unless that is the root of the filesystem (a file right under
// / is nobody's place for a database); then the installed host's data directory where there is
// one (InstalledDataDirs), else the current directory (".", which an example written as
// "sqlite:"+filepath.Join(dir, name) gives as the bare file name).
func SQLiteDirInstead(dir string) string {
	up := filepath.Dir(dir)
	for up != filepath.Dir(up) && !isDir(up) {
		up = filepath.Dir(up)
	}
	if isDir(up) && !(filepath.IsAbs(up) && filepath.Dir(up) == up) {
		return up
	}
	for _, d := range InstalledDataDirs {
		if isDir(d) {
			return d
		}
	}
	return "."
}
