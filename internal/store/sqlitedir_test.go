package store_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/store"
)

// A SQLite file whose directory does not exist is refused in one sentence naming the directory,
// with an example in the nearest directory above it that exists, as the command line's refusal
// gives; the example, opened, works.
func TestASQLiteFileInAMissingDirectoryGetsAnExampleThatWorks(t *testing.T) {
	t.Chdir(t.TempDir())
	base := t.TempDir()
	dir := filepath.Join(base, "no-such", "deeper")
	_, err := store.Open(t.Context(), "sqlite:"+filepath.Join(dir, "ledger.db"), slog.New(slog.DiscardHandler))
	if err == nil {
		t.Fatal("opened a SQLite file in a directory that does not exist")
	}
	msg := err.Error()
	if !strings.Contains(msg, "the directory "+dir+" does not exist") || !strings.Contains(msg, "mkdir -p "+dir) || strings.Contains(msg, "\n") {
		t.Fatalf("%q; want one sentence naming %s and how to create it", msg, dir)
	}
	_, eg, ok := strings.Cut(msg, "e.g. ")
	if want := "sqlite:" + filepath.Join(base, "ledger.db"); !ok || eg != want {
		t.Fatalf("the example is %q; want %s, the file in the nearest directory that exists", eg, want)
	}
	db, err := store.Open(t.Context(), eg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("the example %s: %v", eg, err)
	}
	_ = db.Close()
	if _, err := os.Stat(filepath.Join(base, "ledger.db")); err != nil {
		t.Errorf("the example made no file: %v", err)
	}
}

// Where the missing directory is right under / the example is not the root of the filesystem: the
// installed host's data directory where there is one, else the file in the current directory.
func TestASQLiteFileUnderAMissingTopDirectoryIsNotOfferedTheRoot(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	was := store.InstalledDataDirs
	store.InstalledDataDirs = []string{filepath.Join(t.TempDir(), "not-installed")}
	t.Cleanup(func() { store.InstalledDataDirs = was })
	top := "/" + filepath.Base(t.TempDir()) + "-no-such"
	if _, err := os.Stat(top); err == nil {
		t.Fatalf("%s exists", top)
	}
	_, err := store.Open(t.Context(), "sqlite:"+filepath.Join(top, "qm", "ledger.db"), slog.New(slog.DiscardHandler))
	if err == nil {
		t.Fatal("opened a SQLite file in a directory that does not exist")
	}
	if _, eg, _ := strings.Cut(err.Error(), "e.g. "); eg != "sqlite:ledger.db" {
		t.Errorf("%q; want the example sqlite:ledger.db", err)
	}
	data := filepath.Join(t.TempDir(), "srv", "qm-data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	store.InstalledDataDirs = []string{data}
	_, err = store.Open(t.Context(), "sqlite:"+filepath.Join(top, "ledger.db"), slog.New(slog.DiscardHandler))
	if _, eg, _ := strings.Cut(err.Error(), "e.g. "); eg != "sqlite:"+filepath.Join(data, "ledger.db") {
		t.Errorf("%v; want the example in the installed data directory", err)
	}
}
