package main

import (
	"database/sql"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/shellword"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// migrate status, and migrate down, on a PostgreSQL database never migrated say that no migration
// is applied yet and how to apply them, and create nothing: no goose_db_version table or any other.
// Once migrate up ran, status lists them applied.
func TestMigrateStatusOnANeverMigratedPostgresCreatesNothing(t *testing.T) {
	t.Parallel()
	url := storetest.Postgres(t) // a new, empty schema, dropped when the test ends
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	admin, err := sql.Open("postgres", storetest.PostgresDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	tables := func() []string {
		t.Helper()
		rows, err := admin.Query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", schema)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		return out
	}

	code, out, stderr := runQM("migrate", "status", "--db", url)
	if code != 0 {
		t.Fatalf("migrate status: exit %d, %q", code, stderr)
	}
	// The command it suggests names the database it was given (QM_TEST_POSTGRES_DSN may point
	// anywhere), its password masked.
	for _, w := range []string{"no migrations applied yet", "quartermaster migrate up --db " + shellword.Quote(store.Redact(url))} {
		if !strings.Contains(out, w) {
			t.Errorf("migrate status: %q does not say %q", out, w)
		}
	}
	if pw, ok := u.User.Password(); ok && pw != "" && strings.Contains(out, pw) {
		t.Errorf("migrate status shows the database password: %q", out)
	}
	if got := tables(); len(got) > 0 {
		t.Errorf("migrate status created %v in the schema %s", got, schema)
	}
	if code, _, stderr := runQM("migrate", "down", "--db", url); code == 0 || !strings.Contains(stderr, "no migration to roll back") {
		t.Errorf("migrate down: exit %d, %q", code, stderr)
	}
	if got := tables(); len(got) > 0 {
		t.Errorf("migrate down created %v in the schema %s", got, schema)
	}

	if code, _, stderr := runQM("migrate", "up", "--db", url); code != 0 {
		t.Fatalf("migrate up: exit %d, %q", code, stderr)
	}
	code, out, stderr = runQM("migrate", "status", "--db", url)
	if code != 0 || strings.Contains(out, "no migrations applied yet") || strings.Contains(out, "pending") || !strings.Contains(out, "applied") {
		t.Errorf("migrate status after up: exit %d, %q, %q", code, out, stderr)
	}
}

// The same on a SQLite file that exists but was never migrated (made by hand, or by another
// tool): status says so and adds no table.
func TestMigrateStatusOnANeverMigratedSQLiteFileCreatesNothing(t *testing.T) {
	clearEnv(t)
	file := filepath.Join(t.TempDir(), "qm.db")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runQM("migrate", "status", "--db", "sqlite:"+file)
	if code != 0 || !strings.Contains(out, "no migrations applied yet") || !strings.Contains(out, "quartermaster migrate up --db sqlite:"+file) {
		t.Errorf("migrate status: exit %d, %q, %q", code, out, stderr)
	}
	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table'").Scan(&n); err != nil || n != 0 {
		t.Errorf("migrate status made %d tables in %s (%v)", n, file, err)
	}
}

// A PostgreSQL URL whose search_path names no schema of the database (a scratch schema not
// created yet, a typo) is refused by migrate up, migrate status and serve's start alike in one
// sentence naming the schema and the statement that makes it, rather than migrate failing on a
// missing goose_db_version relation, or status saying nothing is applied yet as if migrate up
// would then work.
func TestAPostgresSearchPathOfNoSchemaIsNamed(t *testing.T) {
	clearEnv(t)
	u, err := neturl.Parse(storetest.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	missing := u.Query().Get("search_path") + "_missing"
	q := u.Query()
	q.Set("search_path", missing)
	u.RawQuery = q.Encode()
	for _, verb := range []string{"up", "status", "down"} {
		code, out, stderr := runQM("migrate", verb, "--db", u.String())
		msg := strings.TrimSpace(stderr)
		if code == 0 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, missing) || !strings.Contains(msg, "CREATE SCHEMA "+missing) || strings.Contains(msg, "goose_db_version") {
			t.Errorf("migrate %s on search_path %s: exit %d, stdout %q, stderr %q; want one sentence naming the schema and CREATE SCHEMA %s", verb, missing, code, out, msg, missing)
		}
		if strings.Contains(out, "no migrations applied yet") {
			t.Errorf("migrate %s on a missing schema says %q", verb, out)
		}
	}
}

// The migrate up that status and a refusal suggest is one a shell runs as written: a database URL
// with characters a shell reads otherwise (a PostgreSQL URL's ? and &, a space in a SQLite path)
// is in single quotes, so pasting it neither backgrounds half of it at the & nor globs at the ?.
func TestTheSuggestedMigrateUpQuotesTheURLForAShell(t *testing.T) {
	clearEnv(t)
	dir := filepath.Join(t.TempDir(), "qm data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "qm.db")
	want := "quartermaster migrate up --db 'sqlite:" + file + "'"
	code, out, stderr := runQM("migrate", "status", "--db", "sqlite:"+file)
	if code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("migrate status on a missing file: exit %d, %q, %q; want the suggestion %q", code, out, stderr, want)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = runQM("migrate", "status", "--db", "sqlite:"+file)
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("migrate status on a file never migrated: exit %d, %q, %q; want the suggestion %q", code, out, stderr, want)
	}
	plain := filepath.Join(t.TempDir(), "qm.db")
	if code, out, stderr = runQM("migrate", "status", "--db", "sqlite:"+plain); code == 0 || !strings.Contains(stderr, "quartermaster migrate up --db sqlite:"+plain+" ") {
		t.Errorf("migrate status on a plain path: exit %d, %q, %q; want it unquoted", code, out, stderr)
	}

	url := storetest.Postgres(t)
	if !strings.ContainsAny(url, "?&") {
		t.Fatalf("the test URL %q has no query", url)
	}
	code, out, stderr = runQM("migrate", "status", "--db", url)
	if w := "quartermaster migrate up --db '" + store.Redact(url) + "' applies them"; code != 0 || !strings.Contains(out, w) {
		t.Errorf("migrate status on PostgreSQL: exit %d, %q, %q; want %q", code, out, stderr, w)
	}
}
