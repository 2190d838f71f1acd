package store_test

import (
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/acme/quartermaster/internal/store"
)

// nobody is the user the child of TestASQLiteFileOfAnotherUserSaysWhoseItIs runs as.
const nobody = 65534

// A SQLite file this process's user may not write (one restored as root with `install -m 0600`,
// while the service runs as its own user) is refused in one sentence naming the file, whose it is
// and the chown that gives it to the user the service runs as; after that chown it opens. The
// file is not changed meanwhile.
func TestASQLiteFileOfAnotherUserSaysWhoseItIs(t *testing.T) {
	if dir := os.Getenv("QM_TEST_SQLITE_OWNER_DIR"); dir != "" {
		childOpensAnotherUsersFile(t, dir)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make a file of root's and open it as another user")
	}
	nobodyUser, err := user.LookupId(strconv.Itoa(nobody))
	if err != nil {
		t.Skipf("no user %d: %v", nobody, err)
	}
	// A directory the service's user owns (systemd's StateDirectory), holding a file root restored.
	top, err := os.MkdirTemp("", "qm-sqlite-owner-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(top) })
	dir := filepath.Join(top, "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(t.Context(), "sqlite:"+filepath.Join(dir, "quartermaster.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	for _, p := range []string{top, dir} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "quartermaster.db"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The test binary, where the other user may run it.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(top, "store.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	child := func() string {
		cmd := exec.Command(bin, "-test.run", "^TestASQLiteFileOfAnotherUserSaysWhoseItIs$", "-test.v")
		cmd.Dir = top
		cmd.Env = append(os.Environ(), "QM_TEST_SQLITE_OWNER_DIR="+dir, "HOME="+top)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("as %s: %v\n%s", nobodyUser.Username, err, out)
		}
		return string(out)
	}
	out := child()
	_, chown, ok := strings.Cut(out, "e.g. ")
	if !ok {
		t.Fatalf("no example in:\n%s", out)
	}
	chown = strings.TrimSpace(strings.SplitN(chown, "\n", 2)[0])
	want := "chown " + nobodyUser.Username + ":"
	if !strings.HasPrefix(chown, want) || !strings.HasSuffix(chown, " "+filepath.Join(dir, "quartermaster.db")) {
		t.Fatalf("the example is %q; want %s… %s", chown, want, filepath.Join(dir, "quartermaster.db"))
	}
	// Typed back as root, the example works: the other user opens the file.
	if b, err := exec.Command("sh", "-c", chown).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", chown, err, b)
	}
	if out := child(); !strings.Contains(out, "opened after all") {
		t.Fatalf("after %s the file does not open:\n%s", chown, out)
	}
}

// childOpensAnotherUsersFile runs as nobody: it opens the database in dir and prints what it was
// told, the refusal with its example on a line of its own, or that it opened.
func childOpensAnotherUsersFile(t *testing.T, dir string) {
	file := filepath.Join(dir, "quartermaster.db")
	before, _ := os.Stat(file)
	db, err := store.Open(t.Context(), "sqlite:"+file, slog.New(slog.DiscardHandler))
	if err == nil {
		_ = db.Close()
		t.Log("opened after all")
		return
	}
	msg := err.Error()
	t.Logf("refused:\n%s", msg)
	if strings.Contains(msg, "\n") || !strings.Contains(msg, file) || !strings.Contains(msg, "belongs to root") {
		t.Errorf("%q; want one sentence naming %s and that it belongs to root", msg, file)
	}
	if after, err := os.Stat(file); err != nil || before == nil || !after.ModTime().Equal(before.ModTime()) || after.Mode() != before.Mode() {
		t.Errorf("the refused file changed: %v", err)
	}
}
