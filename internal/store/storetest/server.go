package storetest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Server is a PostgreSQL server of the test's own, on its own port and data directory, made with
// the installed initdb and pg_ctl, so a test may stop and start it without touching the shared
// test server.
type Server struct {
	// Port is the loopback port the server listens on.
	Port int
	// ConnectTimeout is the connect_timeout (seconds) URL puts in the database URL.
	ConnectTimeout int

	bin, data, sock string
	asUser          string // run the server as this Unix user (initdb refuses root)
	t               testing.TB
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

// StartServer makes and starts a server whose URL carries connectTimeout; it is stopped and
// removed when the test ends. Without PostgreSQL's server binaries the test is skipped, or fails
// under CI=true.
func StartServer(t testing.TB, connectTimeout int) *Server {
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	s := &Server{Port: port, ConnectTimeout: connectTimeout, bin: bin, data: filepath.Join(dir, "data"), sock: dir, t: t}
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
	s.Start()
	t.Cleanup(func() { _ = s.cmd("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop").Run() })
	return s
}

// URL is the server's database URL for the postgres database.
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=%d", s.Port, s.ConnectTimeout)
}

func (s *Server) cmd(name string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bin, name)
	if s.asUser != "" {
		return exec.Command("runuser", append([]string{"-u", s.asUser, "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

func (s *Server) run(name string, args ...string) {
	s.t.Helper()
	if out, err := s.cmd(name, args...).CombinedOutput(); err != nil {
		s.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// Start starts the server and waits until it takes connections.
func (s *Server) Start() {
	s.t.Helper()
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c max_connections=30", s.Port, s.sock)
	s.run("pg_ctl", "-D", s.data, "-o", opts, "-l", filepath.Join(s.sock, "server.log"), "-w", "-t", "60", "start")
}

// Stop stops the server at once, as a crash or a pulled cable would look to its clients.
func (s *Server) Stop() {
	s.t.Helper()
	s.run("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop")
}
