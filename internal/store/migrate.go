package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"
	"github.com/pressly/goose/v3/lock"

	"github.com/acme/quartermaster/migrations"
)

// migrateLockWait is how long a replica waits for another one's migrations before giving up.
const migrateLockWait = 5 * time.Minute

// MigrationStatus is one migration and whether the database has it.
type MigrationStatus struct {
	Version   int64
	Name      string // the file, like 00001_leases.sql
	Applied   bool
	AppliedAt time.Time // zero when not applied
	// Unknown marks a migration the database has and this binary does not: a newer binary
	// applied it. Its Name is empty.
	Unknown bool
}

// NewerDatabaseError is the refusal to migrate, or to start, on a database that a newer binary
// migrated: it has migrations this binary does not know, so this binary would run on a schema it
// was not written for.
type NewerDatabaseError struct {
	Dialect  string
	Versions []int64 // the database's migrations this binary does not have, in order
}

func (e *NewerDatabaseError) Error() string {
	vs := make([]string, len(e.Versions))
	for i, v := range e.Versions {
		vs[i] = strconv.FormatInt(v, 10)
	}
	noun := "migration"
	if len(vs) > 1 {
		noun = "migrations"
	}
	return fmt.Sprintf("the %s database has %s %s that this quartermaster does not know, so a newer quartermaster migrated it; "+
		"run that version, or roll back with its `quartermaster migrate down` (once per migration) before starting this one",
		e.Dialect, noun, strings.Join(vs, ", "))
}

// Migrate applies the migrations the database does not have yet. It holds a lock meanwhile (a
// session advisory lock on PostgreSQL, a file lock beside the file on SQLite), so processes
// starting together migrate one after the other.
func (db *DB) Migrate(ctx context.Context) error {
	unlock, err := db.lockMigrations(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	p, err := db.provider(ctx)
	if err != nil {
		return err
	}
	if err := db.refuseNewer(ctx, p); err != nil {
		return err
	}
	results, err := p.Up(ctx)
	for _, r := range results {
		db.logResult(ctx, r)
	}
	if err != nil {
		return fmt.Errorf("store: migrate up: %w", err)
	}
	return nil
}

// MigrateDown rolls the most recent migration back.
func (db *DB) MigrateDown(ctx context.Context) error {
	unlock, err := db.lockMigrations(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	p, err := db.provider(ctx)
	if err != nil {
		return err
	}
	if err := db.refuseNewer(ctx, p); err != nil {
		return err
	}
	r, err := p.Down(ctx)
	if r != nil {
		db.logResult(ctx, r)
	}
	if err != nil {
		return fmt.Errorf("store: migrate down: %w", err)
	}
	return nil
}

func (db *DB) logResult(ctx context.Context, r *goose.MigrationResult) {
	if r.Error != nil {
		db.logger.ErrorContext(ctx, "migration failed", "direction", r.Direction, "file", baseName(r.Source.Path), "err", r.Error)
		return
	}
	db.logger.InfoContext(ctx, "migrated", "direction", r.Direction, "file", baseName(r.Source.Path), "duration", r.Duration)
}

// Status lists every migration in version order and whether it is applied. It writes nothing: on
// a database never migrated (no version table) every migration is pending.
func (db *DB) Status(ctx context.Context) ([]MigrationStatus, error) {
	migrated, err := db.versionTableExists(ctx)
	if err != nil {
		return nil, err
	}
	if !migrated {
		p, err := db.provider(ctx)
		if err != nil {
			return nil, err
		}
		var out []MigrationStatus
		for _, src := range p.ListSources() {
			out = append(out, MigrationStatus{Version: src.Version, Name: baseName(src.Path)})
		}
		return out, nil
	}
	// goose's status would create its version table were it missing: not while another process
	// migrates.
	unlock, err := db.lockMigrations(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p, err := db.provider(ctx)
	if err != nil {
		return nil, err
	}
	st, err := p.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migration status: %w", err)
	}
	out := make([]MigrationStatus, len(st))
	for i, s := range st {
		out[i] = MigrationStatus{
			Version: s.Source.Version,
			Name:    baseName(s.Source.Path),
			Applied: s.State == goose.StateApplied,
		}
		if out[i].Applied {
			out[i].AppliedAt = s.AppliedAt.UTC()
		}
	}
	unknown, err := db.unknownMigrations(ctx, p)
	if err != nil {
		return nil, err
	}
	for _, u := range unknown {
		out = append(out, MigrationStatus{Version: u.Version, Applied: true, AppliedAt: u.AppliedAt, Unknown: true})
	}
	slices.SortStableFunc(out, func(a, b MigrationStatus) int { return cmp.Compare(a.Version, b.Version) })
	return out, nil
}

// versionTableExists reports whether goose's version table is in the database (in the current
// schema on PostgreSQL), that is whether the database was ever migrated. It only reads.
func (db *DB) versionTableExists(ctx context.Context) (bool, error) {
	q := "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?)"
	if db.dialect == Postgres {
		q = "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = $1)"
	}
	var exists bool
	if err := db.x.QueryRowContext(ctx, q, goose.DefaultTablename).Scan(&exists); err != nil {
		return false, fmt.Errorf("store: migration status: %w", err)
	}
	return exists, nil
}

// refuseNewer returns a *NewerDatabaseError when the database has migrations p does not.
func (db *DB) refuseNewer(ctx context.Context, p *goose.Provider) error {
	// The status creates goose's version table on a new database, which has no unknown migration.
	if _, err := p.Status(ctx); err != nil {
		return fmt.Errorf("store: migration status: %w", err)
	}
	unknown, err := db.unknownMigrations(ctx, p)
	if err != nil || len(unknown) == 0 {
		return err
	}
	e := &NewerDatabaseError{Dialect: db.dialect}
	for _, u := range unknown {
		e.Versions = append(e.Versions, u.Version)
	}
	return e
}

// unknownMigrations lists the migrations the database records as applied that p has no source
// for, in version order. The version table must exist (p.Status creates it).
func (db *DB) unknownMigrations(ctx context.Context, p *goose.Provider) ([]MigrationStatus, error) {
	dialect := database.DialectSQLite3
	if db.dialect == Postgres {
		dialect = database.DialectPostgres
	}
	gs, err := database.NewStore(dialect, goose.DefaultTablename)
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	rows, err := gs.ListMigrations(ctx, db.x.DB)
	if err != nil {
		return nil, fmt.Errorf("store: migrations the database has: %w", err)
	}
	known := map[int64]bool{0: true} // goose records version 0 when it makes its table
	for _, src := range p.ListSources() {
		known[src.Version] = true
	}
	var out []MigrationStatus
	for _, r := range rows {
		if !r.IsApplied || known[r.Version] {
			continue
		}
		known[r.Version] = true
		m := MigrationStatus{Version: r.Version, Applied: true, Unknown: true}
		if got, err := gs.GetMigration(ctx, db.x.DB, r.Version); err == nil {
			m.AppliedAt = got.Timestamp.UTC()
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b MigrationStatus) int { return cmp.Compare(a.Version, b.Version) })
	return out, nil
}

func baseName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}

// provider builds a goose provider over this dialect's folder of migrations.
func (db *DB) provider(ctx context.Context) (*goose.Provider, error) {
	dialect := goose.DialectSQLite3
	if db.dialect == Postgres {
		dialect = goose.DialectPostgres
	}
	sub, err := fs.Sub(migrations.FS, db.dialect)
	if err != nil {
		return nil, fmt.Errorf("store: migrations for %s: %w", db.dialect, err)
	}
	// Migration numbers are handed out in ranges, one per line of work (00010–00019, 00020–00029,
	// …), so a lower number can arrive after higher ones were applied: it is applied then, not
	// refused.
	opts := []goose.ProviderOption{goose.WithAllowOutofOrder(true)}
	if db.dialect == Postgres {
		id, err := db.migrateLockID(ctx)
		if err != nil {
			return nil, err
		}
		locker, err := lock.NewPostgresSessionLocker(
			lock.WithLockID(id),
			lock.WithLockTimeout(1, uint64(migrateLockWait/time.Second)),
		)
		if err != nil {
			return nil, fmt.Errorf("store: migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	// The provider is not closed: its Close would close our pool.
	p, err := goose.NewProvider(dialect, db.x.DB, sub, opts...)
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	return p, nil
}

// migrateLockID is the advisory lock replicas migrating one schema share. It is derived from the
// schema's name, so databases in other schemas (tests run one per schema) migrate in parallel.
func (db *DB) migrateLockID(ctx context.Context) (int64, error) {
	var schema sql.NullString
	if err := db.x.GetContext(ctx, &schema, "SELECT current_schema()"); err != nil {
		return 0, fmt.Errorf("store: current schema: %w", err)
	}
	h := fnv.New64a()
	h.Write([]byte("qm:migrate:"))
	h.Write([]byte(schema.String))
	return int64(h.Sum64()), nil
}
