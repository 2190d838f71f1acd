// Package storetest gives tests real databases to run against: a fresh PostgreSQL schema per test
// (Postgres), a fresh SQLite file per test (SQLite), an opened and migrated store (Open), and the
// conformance suite every qm.Store must pass (Conformance).
//
// PostgreSQL comes from QM_TEST_POSTGRES_DSN, by default DefaultPostgresDSN (the server
// scripts/pg-up.sh starts). When it cannot be reached a test that needs it is skipped, or fails
// when CI=true, so CI never passes by skipping.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store"
)

// DefaultPostgresDSN is the test server's database when QM_TEST_POSTGRES_DSN is unset.
const DefaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable&connect_timeout=5"

// PostgresDSNEnv names the variable that points the tests at another PostgreSQL database.
const PostgresDSNEnv = "QM_TEST_POSTGRES_DSN"

// adminTimeout bounds creating and dropping a test schema.
const adminTimeout = 20 * time.Second

// PostgresDSN is the PostgreSQL database the tests use.
func PostgresDSN() string {
	if dsn := os.Getenv(PostgresDSNEnv); dsn != "" {
		return dsn
	}
	return DefaultPostgresDSN
}

// Postgres creates an empty schema t_<random> in the test database, drops it (with everything in it)
// when the test ends, and returns a URL for store.Open whose connections use that schema. Tests that
// each call it can run in parallel and leave nothing behind.
func Postgres(t testing.TB) string {
	t.Helper()
	base := PostgresDSN()
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("storetest: %s must be a postgres:// URL, got %q", PostgresDSNEnv, base)
	}
	schema := "t_" + randomHex(8)

	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	if err := adminExec(ctx, base, "CREATE SCHEMA "+schema); err != nil {
		unavailable(t, fmt.Sprintf("PostgreSQL at %s is not available (%v); run scripts/pg-up.sh or set %s", redact(u), err, PostgresDSNEnv))
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		defer cancel()
		if err := adminExec(ctx, base, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Errorf("storetest: drop schema %s: %v", schema, err)
		}
	})

	q := u.Query()
	q.Set("search_path", schema)
	// A test's commits need not wait for the disk; the schema is dropped when it ends anyway.
	q.Set("synchronous_commit", "off")
	u.RawQuery = q.Encode()
	return u.String()
}

// RequirePostgres skips the test (fails it under CI=true) unless the test database answers, without
// creating anything. Call it before work that would open many Postgres schemas, so one clear skip
// replaces many.
func RequirePostgres(t testing.TB) {
	t.Helper()
	base := PostgresDSN()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("storetest: %s: %v", PostgresDSNEnv, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	if err := adminExec(ctx, base, "SELECT 1"); err != nil {
		unavailable(t, fmt.Sprintf("PostgreSQL at %s is not available (%v); run scripts/pg-up.sh or set %s", redact(u), err, PostgresDSNEnv))
	}
}

// unavailable skips the test, or fails it under CI=true.
func unavailable(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("storetest: %s", msg)
	}
	t.Skipf("storetest: skipping: %s", msg)
}

// adminExec runs one statement on its own short-lived connection. The store package registers
// the "postgres" driver; this package imports no driver of its own.
func adminExec(ctx context.Context, dsn, stmt string) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, stmt)
	return err
}

// SQLite returns a URL for store.Open naming a new database file in the test's temporary directory.
func SQLite(t testing.TB) string {
	t.Helper()
	return "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
}

// MemorySQLite returns the URL of a private in-memory SQLite database.
func MemorySQLite(t testing.TB) string {
	t.Helper()
	return "sqlite::memory:"
}

// Open opens and migrates the store at url, failing the test if it cannot, and closes it when the
// test ends. Its log goes to the test's log. A SQLite file that does not exist yet (as SQLite
// names it) starts as a copy of one this process migrated once (see migratedSQLite), so that
// store.Open finds every migration applied, as it would have left it.
func Open(t testing.TB, url string) *store.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	copyMigratedSQLite(ctx, url)
	db, err := store.Open(ctx, url, Logger(t))
	if err != nil {
		t.Fatalf("storetest: open %s: %v", url, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// Logger is a slog.Logger writing warnings and errors to the test's log.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// redact hides the password of a URL meant for a message.
func redact(u *url.URL) string {
	return u.Redacted()
}

// Query runs one read-only query on a PostgreSQL URL (as Postgres returns, or any other) on its
// own connection and returns its rows as text, NULL as "". Fault tests use it to check what the
// service left in the database from outside the service.
func Query(t testing.TB, url, query string, args ...any) [][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatalf("storetest: query: %v", err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		t.Fatalf("storetest: %s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("storetest: %s: %v", query, err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("storetest: %s: %v", query, err)
	}
	return out
}

// migratedSQLite is a SQLite database file as store.Open leaves a new one (every migration
// applied), made the first time a test of this process opens a new SQLite file. Applying the
// migrations one statement at a time costs a second or more a test under the race detector
// (modernc.org/sqlite is Go), where copying the file costs next to nothing; the migrations
// themselves still run, once per process, and the store tests of migrating (internal/store) open
// their databases with store.Open.
var migratedSQLite struct {
	once sync.Once
	data []byte // nil where the copy could not be made: each test then migrates its own file
}

// copyMigratedSQLite writes the migrated file to url's path where url names a SQLite file, with
// no options, that does not exist yet, along with no journal of its own.
func copyMigratedSQLite(ctx context.Context, url string) {
	path, ok := strings.CutPrefix(url, "sqlite:")
	if !ok || path == "" || strings.HasPrefix(path, ":memory:") || strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "//") {
		return
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			return
		}
	}
	migratedSQLite.once.Do(func() { migratedSQLite.data = migrateSQLiteOnce(ctx) })
	if migratedSQLite.data == nil {
		return
	}
	if err := os.WriteFile(path, migratedSQLite.data, 0o600); err != nil {
		_ = os.Remove(path) // store.Open then says what is wrong with the path
	}
}

// migrateSQLiteOnce migrates a new SQLite file in a temporary directory, closes it and returns its
// bytes; nil if any step fails or the database left a journal beside it when closed.
func migrateSQLiteOnce(ctx context.Context) []byte {
	dir, err := os.MkdirTemp("", "qm-storetest-")
	if err != nil {
		return nil
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "migrated.db")
	db, err := store.Open(ctx, "sqlite:"+file, nil)
	if err != nil {
		return nil
	}
	if err := db.Close(); err != nil {
		return nil
	}
	for _, p := range []string{file + "-wal", file + "-journal"} {
		if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
			return nil
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	return data
}
