package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/store"
)

// sqliteExampleFrom is the --db example a refusal ends with.
func sqliteExampleFrom(t *testing.T, stderr string) string {
	t.Helper()
	_, eg, ok := strings.Cut(strings.TrimSpace(stderr), "e.g. ")
	if !ok {
		t.Fatalf("no example in %q", stderr)
	}
	f := strings.Fields(eg)
	for i, w := range f {
		if w == "--db" && i+1 < len(f) {
			return f[i+1]
		}
	}
	t.Fatalf("the example %q has no --db", eg)
	return ""
}

// A SQLite file whose directory is missing right under / (sqlite:/srv-typo/qm/acct.db) is not
// given the root of the filesystem as its example (sqlite:/acct.db): the refusal says which
// directory is missing, in one sentence, and offers the same file in the current directory, an
// example that, typed back, works.
func TestASQLiteFileUnderAMissingTopDirectoryGetsNoRootExample(t *testing.T) {
	clearEnv(t)
	cwd := t.TempDir()
	t.Chdir(cwd)
	was := store.InstalledDataDirs
	store.InstalledDataDirs = []string{filepath.Join(t.TempDir(), "not-installed")}
	t.Cleanup(func() { store.InstalledDataDirs = was })
	top := "/" + filepath.Base(t.TempDir()) + "-no-such"
	if _, err := os.Stat(top); err == nil {
		t.Fatalf("%s exists", top)
	}
	dir := filepath.Join(top, "qm")
	code, _, stderr := runQM("migrate", "up", "--db", "sqlite:"+filepath.Join(dir, "acct.db"))
	msg := strings.TrimSpace(stderr)
	if code == 0 || !strings.Contains(msg, "the directory "+dir+" does not exist") || strings.Contains(msg, "\n") {
		t.Fatalf("exit %d, %q; want one sentence saying %s does not exist", code, msg, dir)
	}
	eg := sqliteExampleFrom(t, msg)
	if eg != "sqlite:acct.db" {
		t.Fatalf("the example is --db %s; want the same file in the current directory, sqlite:acct.db", eg)
	}
	if code, _, stderr := runQM("migrate", "up", "--db", eg); code != 0 {
		t.Errorf("the example --db %s: exit %d, %s", eg, code, stderr)
	}
	if _, err := os.Stat(filepath.Join(cwd, "acct.db")); err != nil {
		t.Errorf("the example made no file in the current directory: %v", err)
	}
}

// On an installed host (/var/lib/quartermaster/data, as docs/operations.md lays it out, exists)
// the example is the file there.
func TestASQLiteFileUnderAMissingTopDirectoryGetsTheInstalledDataDirectory(t *testing.T) {
	clearEnv(t)
	t.Chdir(t.TempDir())
	data := filepath.Join(t.TempDir(), "var", "lib", "quartermaster", "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	was := store.InstalledDataDirs
	store.InstalledDataDirs = []string{data}
	t.Cleanup(func() { store.InstalledDataDirs = was })
	top := "/" + filepath.Base(t.TempDir()) + "-no-such"
	code, _, stderr := runQM("migrate", "up", "--db", "sqlite:"+filepath.Join(top, "quartermaster.db"))
	if code == 0 {
		t.Fatalf("exit 0: %s", stderr)
	}
	if eg := sqliteExampleFrom(t, stderr); eg != "sqlite:"+filepath.Join(data, "quartermaster.db") {
		t.Errorf("the example is --db %s; want the installed data directory's file", eg)
	}
	// A relative path keeps to the current directory, as typed.
	code, _, stderr = runQM("migrate", "up", "--db", "sqlite:no/such/acct.db")
	if code == 0 {
		t.Fatalf("exit 0: %s", stderr)
	}
	if eg := sqliteExampleFrom(t, stderr); eg != "sqlite:acct.db" {
		t.Errorf("a relative path: the example is --db %s; want sqlite:acct.db", eg)
	}
}
