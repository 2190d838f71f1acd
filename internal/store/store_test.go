package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// backends are the databases every test here runs against.
var backends = []struct {
	name string
	url  func(t testing.TB) string
}{
	{"sqlite", storetest.SQLite},
	{"sqlite-memory", storetest.MemorySQLite},
	{"postgres", storetest.Postgres},
}

func eachBackend(t *testing.T, fn func(t *testing.T, url string)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.url(t))
		})
	}
}

func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			if b.name == "postgres" {
				storetest.RequirePostgres(t)
			}
			storetest.Conformance(t, func(t *testing.T) qm.Store {
				return storetest.Open(t, b.url(t))
			})
		})
	}
}

func lease(n int) *qm.Lease {
	return &qm.Lease{User: fmt.Sprintf("U%d", n), Team: "vision", Class: "h100", GPUs: 1, State: qm.Active, Duration: time.Hour}
}

func TestZeroTimesAreNull(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		l := lease(1)
		l.StartedAt = time.Date(2026, 2, 3, 4, 5, 6, 7000, time.FixedZone("X", 7200))
		if err := db.Update(t.Context(), nil, func(tx qm.Tx) error { return tx.CreateLease(t.Context(), l) }); err != nil {
			t.Fatal(err)
		}
		var nulls, started int
		x := store.SQLX(db)
		err := x.GetContext(t.Context(), &nulls, `SELECT COUNT(*) FROM leases WHERE created_at IS NULL AND expires_at IS NULL
			AND ended_at IS NULL AND kept_at IS NULL AND warned_at IS NULL AND decided_at IS NULL AND request_key IS NULL
			AND expiry_warned_for IS NULL`)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.GetContext(t.Context(), &started, x.Rebind(`SELECT COUNT(*) FROM leases WHERE started_at = ?`),
			time.Date(2026, 2, 3, 2, 5, 6, 7000, time.UTC)); err != nil {
			t.Fatal(err)
		}
		if nulls != 1 || started != 1 {
			t.Errorf("zero times stored as NULL: %d rows, started_at in UTC: %d rows; want 1, 1", nulls, started)
		}
		if db.Dialect() == store.SQLite {
			var text string
			if err := x.GetContext(t.Context(), &text, `SELECT CAST(started_at AS TEXT) FROM leases`); err != nil {
				t.Fatal(err)
			}
			if text != "2026-02-03 02:05:06.000007+00:00" {
				t.Errorf("started_at stored as %q", text)
			}
		}
	})
}

func TestMigrations(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		ctx := t.Context()
		db := storetest.Open(t, url)
		st, err := db.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(st) < 2 || st[0].Name != "00001_leases.sql" || st[1].Name != "00002_lease_events.sql" {
			t.Fatalf("status %+v", st)
		}
		for _, m := range st {
			if !m.Applied || m.AppliedAt.IsZero() {
				t.Errorf("%s not applied after Open", m.Name)
			}
		}
		// Open again: nothing to do.
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.MigrateDown(ctx); err != nil {
			t.Fatal(err)
		}
		st, err = db.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if last := st[len(st)-1]; last.Applied {
			t.Errorf("%s still applied after MigrateDown", last.Name)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.Update(ctx, nil, func(tx qm.Tx) error { return tx.CreateLease(ctx, lease(1)) }); err != nil {
			t.Fatalf("after down and up: %v", err)
		}
		// All the way down leaves no tables, and up again works.
		for range st {
			if err := db.MigrateDown(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestALowerMigrationArrivingLaterIsApplied: a database migrated before 00010 existed (its
// highest version 40) gets 00010 when it arrives, rather than an error, and works with it.
func TestALowerMigrationArrivingLaterIsApplied(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		ctx := t.Context()
		db := storetest.Open(t, url)
		x := store.SQLX(db)
		for _, q := range []string{`ALTER TABLE leases DROP COLUMN gpu_connection`, `DELETE FROM goose_db_version WHERE version_id = 10`} {
			if _, err := x.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("migrate with 00010 missing below 00040: %v", err)
		}
		st, err := db.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range st {
			if !m.Applied {
				t.Errorf("%s not applied", m.Name)
			}
		}
		l := lease(1)
		l.Connection = qm.ConnectionIsland
		if err := db.Update(ctx, nil, func(tx qm.Tx) error { return tx.CreateLease(ctx, l) }); err != nil {
			t.Fatal(err)
		}
		var got *qm.Lease
		if err := db.View(ctx, func(tx qm.Tx) error { got, err = tx.GetLease(ctx, l.ID); return err }); err != nil || got.Connection != qm.ConnectionIsland {
			t.Fatalf("lease after the late migration: %+v, %v", got, err)
		}
	})
}

// TestADatabaseANewerBinaryMigratedIsRefused: after a newer quartermaster applied a migration
// this one does not have (an upgrade rolled back by installing the old binary alone), starting,
// migrating up and migrating down are refused with a sentence naming the migration, instead of
// running on a schema this binary was not written for; the status lists it.
func TestADatabaseANewerBinaryMigratedIsRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		ctx := t.Context()
		db := storetest.Open(t, url)
		x := store.SQLX(db)
		if _, err := x.ExecContext(ctx, x.Rebind(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, ?)`), 99999, true); err != nil {
			t.Fatal(err)
		}
		check := func(what string, err error) {
			t.Helper()
			var newer *store.NewerDatabaseError
			if !errors.As(err, &newer) || !slices.Equal(newer.Versions, []int64{99999}) ||
				!strings.Contains(err.Error(), "99999") || !strings.Contains(err.Error(), "newer quartermaster") {
				t.Errorf("%s on a database with migration 99999 from a newer binary: %v; want a refusal naming it", what, err)
			}
		}
		check("migrate up", db.Migrate(ctx))
		check("migrate down", db.MigrateDown(ctx))
		if !strings.HasSuffix(url, ":memory:") {
			again, err := store.Open(ctx, url, nil)
			if err == nil {
				_ = again.Close()
			}
			check("open (serve's start)", err)
		}
		st, err := db.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		last := st[len(st)-1]
		if !last.Unknown || last.Version != 99999 || !last.Applied {
			t.Errorf("status ends with %+v; want migration 99999 marked unknown", last)
		}
		if prev := st[len(st)-2]; prev.Unknown || !prev.Applied {
			t.Errorf("the refused migrate down rolled %s back", prev.Name)
		}
	})
}

// TestConnectDoesNotMigrate checks the door the migrate command uses.
func TestConnectDoesNotMigrate(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		if strings.HasSuffix(url, ":memory:") {
			t.Skip("a new in-memory database is always empty")
		}
		db, err := store.Connect(t.Context(), url, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		st, err := db.Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range st {
			if m.Applied {
				t.Errorf("%s applied by Connect", m.Name)
			}
		}
	})
}

// TestPostgresReplicasMigrateTogether starts several replicas on one empty schema at once.
func TestPostgresReplicasMigrateTogether(t *testing.T) {
	t.Parallel()
	url := storetest.Postgres(t)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() {
			db, err := store.Open(t.Context(), url, storetest.Logger(t))
			if err == nil {
				err = db.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
}

// sqlState is an error carrying a PostgreSQL SQLSTATE, as the driver's errors do.
type sqlState string

func (s sqlState) Error() string    { return "sqlstate " + string(s) }
func (s sqlState) SQLState() string { return string(s) }

func TestUpdateRetries(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		retries := db.Dialect() == store.Postgres

		// Fails twice with a deadlock, then succeeds: each try starts afresh.
		tries := 0
		err := db.Update(ctx, []string{"k"}, func(tx qm.Tx) error {
			tries++
			if err := tx.CreateLease(ctx, lease(tries)); err != nil {
				return err
			}
			if tries < 3 {
				return fmt.Errorf("wrapped: %w", sqlState("40P01"))
			}
			return nil
		})
		if retries {
			if err != nil || tries != 3 {
				t.Errorf("Update = %v after %d tries; want success after 3", err, tries)
			}
			var n int
			if err := store.SQLX(db).GetContext(ctx, &n, "SELECT COUNT(*) FROM leases"); err != nil || n != 1 {
				t.Errorf("%d leases (%v), want only the last try's", n, err)
			}
		} else if tries != 1 || err == nil {
			t.Errorf("SQLite: %d tries, err %v; want 1 try and the error", tries, err)
		}

		// A failure that keeps coming is returned as it is after the last try.
		tries = 0
		fail := sqlState("40001")
		err = db.Update(ctx, nil, func(tx qm.Tx) error { tries++; return fail })
		want := 1
		if retries {
			want = store.MaxTxAttempts
		}
		if err != fail || tries != want {
			t.Errorf("Update = %v after %d tries; want %v after %d", err, tries, fail, want)
		}

		// Other errors are never retried.
		tries = 0
		_ = db.Update(ctx, nil, func(tx qm.Tx) error { tries++; return sqlState("23505") })
		if tries != 1 {
			t.Errorf("a unique violation was tried %d times", tries)
		}
	})
}

// TestSQLiteTwoProcesses opens one SQLite file twice, as two replicas would: the file lock and
// busy_timeout keep them from failing with SQLITE_BUSY, and BEGIN IMMEDIATE keeps a limit.
func TestSQLiteTwoProcesses(t *testing.T) {
	t.Parallel()
	url := "sqlite:" + filepath.Join(t.TempDir(), "shared.db")
	dbs := []*store.DB{storetest.Open(t, url), storetest.Open(t, url)}
	const limit = 7
	var wg sync.WaitGroup
	errs := make([]error, 30)
	for i := range errs {
		db := dbs[i%2]
		wg.Go(func() {
			errs[i] = db.Update(t.Context(), []string{"quota"}, func(tx qm.Tx) error {
				ls, err := tx.ListLeases(t.Context(), qm.LeaseFilter{Team: "vision"})
				if err != nil || len(ls) >= limit {
					return err
				}
				time.Sleep(time.Millisecond) // let the other handle try to write in between
				return tx.CreateLease(t.Context(), lease(i))
			})
			if errs[i] == nil {
				errs[i] = db.View(t.Context(), func(tx qm.Tx) error {
					_, err := tx.ListLeases(t.Context(), qm.LeaseFilter{})
					return err
				})
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", i, err)
		}
	}
	var n int
	if err := store.SQLX(dbs[0]).GetContext(t.Context(), &n, "SELECT COUNT(*) FROM leases"); err != nil || n != limit {
		t.Errorf("%d leases (%v), want %d", n, err, limit)
	}
}

func TestOpenFails(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := store.Open(ctx, "mysql://x", nil); err == nil {
		t.Error("Open(mysql://) succeeded")
	}
	if _, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "no", "such", "dir", "x.db"), nil); err == nil {
		t.Error("Open(sqlite file in a missing directory) succeeded")
	}
	if _, err := store.Open(ctx, "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2", nil); err == nil {
		t.Error("Open(postgres on a closed port) succeeded")
	}
}

func TestCloseTwice(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.MemorySQLite(t))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	err := db.View(t.Context(), func(qm.Tx) error { return nil })
	if err == nil || errors.Is(err, qm.ErrNotFound) {
		t.Errorf("View on a closed store = %v", err)
	}
}

// BenchmarkCreateUpdate measures one lease's life as the service writes it: a transaction creating
// the lease with its event under a lock, then one activating it. PostgreSQL commits wait for the
// disk here, as in production (the tests turn that off).
func BenchmarkCreateUpdate(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			url := strings.Replace(be.url(b), "synchronous_commit=off", "synchronous_commit=on", 1)
			db := storetest.Open(b, url)
			ctx := b.Context()
			i := 0
			for b.Loop() {
				i++
				l := lease(i)
				l.State = qm.Provisioning
				l.RequestKey = fmt.Sprintf("bench-%d", i)
				err := db.Update(ctx, []string{"team:vision"}, func(tx qm.Tx) error {
					if err := tx.CreateLease(ctx, l); err != nil {
						return err
					}
					return tx.AddEvent(ctx, &qm.Event{Lease: l.ID, At: time.Now(), Actor: l.User, To: l.State})
				})
				if err != nil {
					b.Fatal(err)
				}
				err = db.Update(ctx, []string{"team:vision"}, func(tx qm.Tx) error {
					c := *l
					c.State = qm.Active
					c.StartedAt = time.Now()
					c.ExpiresAt = c.StartedAt.Add(c.Duration)
					return tx.UpdateLease(ctx, &c, l.State)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
