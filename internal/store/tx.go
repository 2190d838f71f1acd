package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/acme/quartermaster/internal/qm"
)

// Update runs fn in one write transaction holding the named locks, and commits if fn returns nil.
//
// On PostgreSQL each key becomes a transaction-level advisory lock (pg_advisory_xact_lock on a
// 64-bit hash of the key), taken before fn runs in ascending order of the hashes, so two
// transactions never wait on each other in opposite orders; commit or rollback releases them.
// The transaction is READ COMMITTED on purpose: every statement in fn sees what the previous
// holder of the lock committed, which a snapshot taken at the first statement (REPEATABLE READ)
// would not. A transaction that fails with a serialization failure or a deadlock (SQLSTATE
// 40001, 40P01) is run again from the start, fn included, a few times.
//
// On SQLite every write transaction begins IMMEDIATE on the one connection, so writers run one at
// a time and the locks need no further work.
//
// If fn returns an error the transaction is rolled back and that error is returned as it is; if
// fn panics the transaction is rolled back and the panic goes on. fn must not use the DB itself
// (on SQLite that would wait forever for the connection the transaction holds).
func (db *DB) Update(ctx context.Context, locks []string, fn func(qm.Tx) error) error {
	ids := lockIDs(locks)
	for attempt := 1; ; attempt++ {
		err := db.runTx(ctx, false, ids, fn)
		if err == nil || db.dialect != Postgres || attempt >= maxTxAttempts || !retryable(err) {
			return err
		}
		db.logger.DebugContext(ctx, "retrying transaction", "attempt", attempt, "err", err)
		// A short, growing, jittered pause lets the other party of a deadlock finish.
		pause := time.Duration(attempt) * (5*time.Millisecond + rand.N(10*time.Millisecond))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// View runs fn in a read-only transaction. Writes through its Tx fail.
func (db *DB) View(ctx context.Context, fn func(qm.Tx) error) error {
	return db.runTx(ctx, true, nil, fn)
}

func (db *DB) runTx(ctx context.Context, readOnly bool, lockIDs []int64, fn func(qm.Tx) error) (err error) {
	defer func() {
		if unreachable(err) {
			db.unreachableAt.Store(time.Now().UnixNano())
			db.logger.Warn("the database cannot be reached", "err", err)
			err = qm.ErrUnavailable
		}
	}()
	x, release, err := db.begin(ctx, readOnly)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer release()
	done := false
	defer func() {
		if !done {
			// fn panicked: roll back and let the panic go on.
			_ = x.Rollback()
		}
	}()
	if db.dialect == Postgres && len(lockIDs) > 0 {
		// One round trip for all the locks, taken in the order of lockIDs (ascending).
		if _, err := x.ExecContext(ctx, "SELECT pg_advisory_xact_lock(id) FROM (SELECT unnest($1::bigint[]) AS id ORDER BY 1) AS ids", pq.Array(lockIDs)); err != nil {
			done = true
			_ = x.Rollback()
			return fmt.Errorf("store: lock: %w", err)
		}
	}
	t := &tx{x: x, db: db, readOnly: readOnly}
	if err := fn(t); err != nil {
		done = true
		_ = x.Rollback()
		return err
	}
	done = true
	if err := x.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// errBeginWait is a transaction that did not begin within the DB's beginWait.
var errBeginWait = errors.New("the database did not answer in time")

// downFor is how long after a statement found the database unreachable the DB counts it as down.
const downFor = 10 * time.Second

// begin starts a transaction and returns it with the function that gives its connection back
// to the pool once it has ended. On PostgreSQL the server must answer BEGIN within beginWait: a
// server that refuses fails at once, and one that accepts and never answers fails here rather
// than at the connection's answer deadline. Waiting for a free pooled connection (many
// transactions at once) does not count, unless the database was found unreachable in the last
// downFor: then the whole wait is bounded, so that while it is down every caller hears so in
// time; and then only one transaction at a time waits to find out whether it is back, the others
// fail at once. A transaction that begins after its caller stopped waiting is rolled back.
func (db *DB) begin(ctx context.Context, readOnly bool) (*sqlx.Tx, func(), error) {
	opts := &sql.TxOptions{ReadOnly: readOnly}
	if db.dialect != Postgres || db.beginWait <= 0 {
		x, err := db.x.BeginTxx(ctx, opts)
		return x, func() {}, err
	}
	type begun struct {
		x   *sqlx.Tx
		c   *sqlx.Conn
		err error
	}
	got := make(chan begun, 1)
	connected := make(chan struct{})
	var mu sync.Mutex
	abandoned := false
	go func() {
		c, err := db.x.Connx(ctx)
		var x *sqlx.Tx
		if err == nil {
			close(connected)
			if x, err = c.BeginTxx(ctx, opts); err != nil {
				_ = c.Close()
				c = nil
			} else {
				db.unreachableAt.Store(0) // it answers
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			if x != nil {
				_ = x.Rollback()
			}
			if c != nil {
				_ = c.Close()
			}
			return
		}
		got <- begun{x, c, err}
	}()
	release := func(c *sqlx.Conn) func() {
		return func() {
			if c != nil {
				_ = c.Close()
			}
		}
	}
	var wait <-chan time.Time
	if db.down() {
		// While the database is down one transaction at a time finds out whether it is back;
		// the others fail at once instead of each waiting, so that answers do not queue up.
		if !db.probing.CompareAndSwap(false, true) {
			return nil, func() {}, errBeginWait
		}
		defer db.probing.Store(false)
		wait = time.After(db.beginWait)
	}
	started := connected
	for done := false; !done; {
		select {
		case b := <-got:
			return b.x, release(b.c), b.err
		case <-started:
			started = nil
			if wait == nil {
				wait = time.After(db.beginWait)
			}
		case <-wait:
			done = true
		case <-ctx.Done():
			done = true
		}
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case b := <-got: // it began just as the wait ended
		return b.x, release(b.c), b.err
	default:
	}
	abandoned = true
	if ctx.Err() != nil {
		return nil, func() {}, ctx.Err()
	}
	return nil, func() {}, errBeginWait
}

// down reports whether a statement found the database unreachable within the last downFor.
func (db *DB) down() bool {
	at := db.unreachableAt.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < downFor
}

// lockIDs hashes lock keys to PostgreSQL advisory lock ids, de-duplicated and sorted. Sorting the
// ids rather than the keys keeps the order consistent even when two keys share a hash.
func lockIDs(keys []string) []int64 {
	if len(keys) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(keys))
	for _, k := range keys {
		h := fnv.New64a()
		h.Write([]byte("qm:lock:"))
		h.Write([]byte(k))
		ids = append(ids, int64(h.Sum64()))
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// retryable reports whether err carries a PostgreSQL serialization failure or deadlock.
func retryable(err error) bool {
	var s interface{ SQLState() string }
	if !errors.As(err, &s) {
		return false
	}
	switch s.SQLState() {
	case "40001", "40P01":
		return true
	}
	return false
}

// tx is a qm.Tx over one database transaction.
type tx struct {
	x        *sqlx.Tx
	db       *DB
	readOnly bool
}

var _ qm.Tx = (*tx)(nil)

// errReadOnly is what a write inside View gets.
var errReadOnly = errors.New("store: write in a read-only transaction")

// writable fails writes made inside View, on both databases alike.
func (t *tx) writable() error {
	if t.readOnly {
		return errReadOnly
	}
	return nil
}

// unreachable reports whether err says the database could not be reached or stopped answering
// (refused, reset, timed out, a connection gone bad), as opposed to an error in a statement.
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	if errors.Is(err, errBeginWait) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &ne) {
		return true
	}
	var s interface{ SQLState() string }
	if errors.As(err, &s) {
		// Class 08: connection exception; 57P01..57P03: the server is shutting down or starting.
		st := s.SQLState()
		return strings.HasPrefix(st, "08") || st == "57P01" || st == "57P02" || st == "57P03"
	}
	return false
}
