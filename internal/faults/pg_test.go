//go:build faults

package faults_test

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// pgServer is a PostgreSQL server of the test's own, on its own port and data directory, made
// with the installed initdb and pg_ctl, so a test may stop and start it without touching the
// shared test server.
type pgServer struct {
	bin, data, sock string
	port            int
	asUser          string // run the server as this Unix user (initdb refuses root)
	t               *testing.T
}

// pgBinDir finds the newest /usr/lib/postgresql/*/bin with initdb.
func pgBinDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	if len(dirs) == 0 {
		return ""
	}
	return filepath.Dir(dirs[0])
}

func pgVersion(p string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(p))))
	return n
}

// startPrivatePostgres makes and starts a server; it is stopped and removed when the test ends.
// Without PostgreSQL's server binaries the test is skipped, or fails under CI=true.
func startPrivatePostgres(t *testing.T) *pgServer {
	t.Helper()
	bin := pgBinDir()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("PostgreSQL's server binaries (/usr/lib/postgresql/*/bin/initdb) are missing; scripts/pg-up.sh installs them")
		}
		t.Skip("PostgreSQL's server binaries are not installed")
	}
	// t.TempDir's parents are private to root; the server may run as another user, so the
	// directory is made world-traversable.
	dir, err := os.MkdirTemp("", "qm-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &pgServer{bin: bin, data: filepath.Join(dir, "data"), sock: dir, port: freePort(t), t: t}
	if os.Geteuid() == 0 {
		s.asUser = "postgres"
		if _, err := user.Lookup(s.asUser); err != nil {
			t.Fatalf("running as root, the test server needs the postgres user: %v", err)
		}
	}
	if err := os.Mkdir(s.data, 0o700); err != nil {
		t.Fatal(err)
	}
	if s.asUser != "" {
		if out, err := exec.Command("chown", s.asUser+":", s.data, dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v: %s", err, out)
		}
	}
	s.run("initdb", "-D", s.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	s.start()
	t.Cleanup(func() { _ = s.cmd("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop").Run() })
	return s
}

// URL is the server's database URL for the postgres database.
func (s *pgServer) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=15", s.port)
}

func (s *pgServer) cmd(name string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bin, name)
	if s.asUser != "" {
		return exec.Command("runuser", append([]string{"-u", s.asUser, "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

func (s *pgServer) run(name string, args ...string) {
	s.t.Helper()
	if out, err := s.cmd(name, args...).CombinedOutput(); err != nil {
		s.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// start starts the server and waits until it takes connections.
func (s *pgServer) start() {
	s.t.Helper()
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c max_connections=30", s.port, s.sock)
	s.run("pg_ctl", "-D", s.data, "-o", opts, "-l", filepath.Join(s.sock, "server.log"), "-w", "-t", "60", "start")
}

// stop stops the server at once, as a crash or a pulled cable would look to its clients.
func (s *pgServer) stop() {
	s.t.Helper()
	s.run("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop")
}
