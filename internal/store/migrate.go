package store

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"io/fs"
	"time"

	"github.com/pressly/goose/v3"
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

// Status lists every migration in version order and whether it is applied.
func (db *DB) Status(ctx context.Context) ([]MigrationStatus, error) {
	// Reading the status creates goose's version table on a new database: not while another
	// process migrates.
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
