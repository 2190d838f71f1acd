package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// migrate's refusal of a database names where its URL came from, and only that: the flag when
// --db gave it, the variable when QM_DATABASE_URL (or its file) did, the default when neither did.
func TestMigrateNamesWhereTheDatabaseCameFrom(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "gone.db")
	url := "sqlite:" + file
	urlFile := filepath.Join(dir, "db.url")
	if err := os.WriteFile(urlFile, []byte(url+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		env       map[string]string
		args      []string
		says, not []string
	}{
		{"flag", nil, []string{"--db", url}, []string{"--db " + url}, []string{"QM_DATABASE_URL"}},
		{"variable", map[string]string{"QM_DATABASE_URL": url}, nil, []string{"QM_DATABASE_URL=" + url}, []string{"--db", "QM_DATABASE_URL_FILE"}},
		{"file", map[string]string{"QM_DATABASE_URL_FILE": urlFile}, nil, []string{"QM_DATABASE_URL_FILE"}, []string{"--db", "env QM_DATABASE_URL", "QM_DATABASE_URL="}},
		{"default", map[string]string{"QM_DATA_DIR": filepath.Join(dir, "data")}, nil, []string{"the default sqlite:" + filepath.Join(dir, "data")}, []string{"(env "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			code, _, stderr := runQM(append([]string{"migrate", "status"}, c.args...)...)
			msg := strings.TrimSpace(stderr)
			if code == 0 || !strings.Contains(msg, "does not exist yet") {
				t.Fatalf("migrate status of a missing database: exit %d, %q", code, msg)
			}
			for _, w := range c.says {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q, where the database came from", msg, w)
				}
			}
			before, _, _ := strings.Cut(msg, " does not exist yet")
			for _, w := range c.not {
				if strings.Contains(before, w) {
					t.Errorf("%q names %q, which did not give the database", before, w)
				}
			}
		})
	}
}
