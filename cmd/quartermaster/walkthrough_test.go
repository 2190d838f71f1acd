package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/testkit"
)

// The absolute paths docs/operations.md installs to; the test puts each under a temporary root.
var walkthroughPaths = []string{"/etc/quartermaster", "/etc/systemd/system", "/usr/local/bin", "/var/lib/quartermaster", "/var/backups/quartermaster"}

// shBlocks returns the ```sh blocks of doc between the two markers, their list indentation removed.
func shBlocks(t *testing.T, doc, begin, end string) []string {
	t.Helper()
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/operations.md has no %s … %s section", begin, end)
	}
	var blocks []string
	re := regexp.MustCompile("(?ms)^( *)```sh\n(.*?)^ *```")
	for _, m := range re.FindAllStringSubmatch(doc[i:j], -1) {
		var b strings.Builder
		for _, line := range strings.Split(m[2], "\n") {
			b.WriteString(strings.TrimPrefix(line, m[1]) + "\n")
		}
		blocks = append(blocks, b.String())
	}
	if len(blocks) == 0 {
		t.Fatalf("no sh blocks between %s and %s", begin, end)
	}
	return blocks
}

// walkthrough is the machine the documented commands run on: a temporary root for the absolute
// paths, a PostgreSQL server of the test's own, and stand-ins for the commands that would change
// the machine (apt-get, useradd, chown to the new user) or need systemd as PID 1 (systemctl).
type walkthrough struct {
	t        *testing.T
	root     string
	pg       *storetest.Server
	httpPort int
	rewrite  *strings.Replacer
}

func newWalkthrough(t *testing.T) *walkthrough {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the operations walkthrough runs its commands as root, as the document says; CI runs as root")
		}
		t.Skip("the operations walkthrough runs as root, as docs/operations.md does")
	}
	for _, tool := range []string{"curl", "sqlite3", "pg_dump", "pg_restore", "psql", "runuser", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing; the walkthrough uses it", tool)
		}
	}
	w := &walkthrough{t: t, root: t.TempDir(), pg: startPrivatePostgres(t), httpPort: testkit.FreePort(t)}
	var pairs []string
	for _, p := range walkthroughPaths {
		pairs = append(pairs, p, w.root+p)
	}
	pairs = append(pairs, "127.0.0.1:5432", fmt.Sprintf("127.0.0.1:%d", w.pg.Port), "127.0.0.1:8080", fmt.Sprintf("127.0.0.1:%d", w.httpPort))
	w.rewrite = strings.NewReplacer(pairs...)
	for _, d := range []string{"/etc/systemd/system", "/usr/local/bin", "/var/backups"} {
		if err := os.MkdirAll(w.root+d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(w.stopService)
	return w
}

// standIns are shell functions defined before the documented commands run.
const standIns = `
# apt-get: the package must be installed already; nothing is installed.
apt-get() {
  for p in "$@"; do case "$p" in -*|install) ;; *) dpkg -s "$p" >/dev/null 2>&1 || { echo "stand-in apt-get: $p is not installed" >&2; return 1; } ;; esac; done
  echo "stand-in apt-get: $* (installed already)"
}
# useradd, chown: the service runs as the test's user instead of a new one.
useradd() { echo "stand-in useradd: $*"; }
chown() { echo "stand-in chown: $*"; }
# install: the real one; a file it installs from the repository gets the same path prefix.
install() {
  command install "$@"
  local dest="${!#}" src
  for src in "${@:1:$#-1}"; do
    case "$src" in -*|0*) continue ;; esac
    local f="$dest"; [ -d "$dest" ] && f="$dest/$(basename "$src")"
    [ -f "$f" ] && [ -n "${QM_WT_REWRITE:-}" ] && case "$src" in deploy/*|docs/*) sed -i -e "$QM_WT_REWRITE" "$f" ;; esac
  done
  return 0
}
# systemctl: start runs the unit's ExecStartPre and ExecStart with its EnvironmentFile, in its
# WorkingDirectory, in the background, as systemd would; stop sends SIGTERM and waits.
systemctl() {
  local unit="$QM_WT_ROOT/etc/systemd/system/quartermaster.service"
  case "$1" in
    daemon-reload) return 0 ;;
    enable|start|restart)
      [ -f "$unit" ] || { echo "stand-in systemctl: no $unit" >&2; return 1; }
      local envfile pre start dir
      envfile=$(sed -n 's/^EnvironmentFile=//p' "$unit"); pre=$(sed -n 's/^ExecStartPre=//p' "$unit")
      start=$(sed -n 's/^ExecStart=//p' "$unit"); dir=$(sed -n 's/^WorkingDirectory=//p' "$unit")
      mkdir -p "$dir"
      ( set -a; . "$envfile"; set +a; cd "$dir"; $pre && exec $start ) >"$QM_WT_ROOT/service.log" 2>&1 &
      echo $! >"$QM_WT_ROOT/service.pid"
      echo "stand-in systemctl: started $start (pid $!)" ;;
    stop) [ -f "$QM_WT_ROOT/service.pid" ] && kill -TERM "$(cat "$QM_WT_ROOT/service.pid")" && while kill -0 "$(cat "$QM_WT_ROOT/service.pid")" 2>/dev/null; do sleep 0.1; done; rm -f "$QM_WT_ROOT/service.pid" ;;
    *) echo "stand-in systemctl: $*" ;;
  esac
}
`

// sedRewrite is the rewrite as a sed expression, for the files install copies.
func (w *walkthrough) sedRewrite() string {
	var parts []string
	for _, p := range walkthroughPaths {
		parts = append(parts, fmt.Sprintf("s#%s#%s%s#g", p, w.root, p))
	}
	parts = append(parts, fmt.Sprintf("s#127.0.0.1:5432#127.0.0.1:%d#g", w.pg.Port), fmt.Sprintf("s#127.0.0.1:8080#127.0.0.1:%d#g", w.httpPort))
	return strings.Join(parts, ";")
}

// run runs documented commands in bash, from the repository's root, and returns what they printed.
func (w *walkthrough) run(script string) string {
	w.t.Helper()
	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+standIns+"\n"+w.rewrite.Replace(script))
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "QM_WT_ROOT="+w.root, "QM_WT_REWRITE="+w.sedRewrite(),
		"PATH="+w.root+"/usr/local/bin:"+os.Getenv("PATH"), "PGHOST=127.0.0.1", "PGPORT="+strconv.Itoa(w.pg.Port),
		"QM_POLICY=", "QM_DATABASE_URL=", "QM_DATABASE_URL_FILE=", "QM_HTTP_ADDR=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		log, _ := os.ReadFile(filepath.Join(w.root, "service.log"))
		w.t.Fatalf("%v\n--- commands\n%s\n--- output\n%s\n--- service log\n%s", err, script, out.String(), log)
	}
	return out.String()
}

func (w *walkthrough) stopService() {
	b, err := os.ReadFile(filepath.Join(w.root, "service.pid"))
	if err != nil {
		return
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if p, err := os.FindProcess(pid); err == nil && pid > 0 {
		_ = p.Signal(syscall.SIGTERM)
		waitFor(30*time.Second, func() bool { return p.Signal(syscall.Signal(0)) != nil })
	}
	_ = os.Remove(filepath.Join(w.root, "service.pid"))
}

// TestOperationsWalkthrough runs every command of docs/operations.md's install section in order
// (from an empty machine to serve on PostgreSQL behind systemd), then its backup and restore
// section on that install, and checks what an operator would look at: the version, the policy
// check, the migrations, /readyz, and a lease surviving a backup and restore.
func TestOperationsWalkthrough(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: the walkthrough builds the binaries")
	}
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	w := newWalkthrough(t)
	var transcript strings.Builder
	for _, b := range shBlocks(t, string(doc), "<!-- walkthrough:begin -->", "<!-- walkthrough:end -->") {
		transcript.WriteString(w.run(b))
	}
	out := transcript.String()
	t.Logf("walkthrough output:\n%s", out)
	migrations, _ := filepath.Glob(filepath.Join(repoRoot, "migrations", "postgres", "*.sql"))
	if len(migrations) == 0 {
		t.Fatal("no migrations")
	}
	last, _ := strconv.Atoi(strings.SplitN(filepath.Base(migrations[len(migrations)-1]), "_", 2)[0])
	for _, want := range []string{
		"\ncommit:  ", "\ngo:      go1.",
		"quartermaster.yaml is valid: ",
		fmt.Sprintf("applied %d migrations; the postgres database is up to date at version %d", len(migrations), last),
		fmt.Sprintf("postgres: %d of %d migrations applied", len(migrations), len(migrations)),
		"ready\ndatabase postgres: ok\nbackend sim: ok\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the walkthrough's output lacks %q", want)
		}
	}
	// The output docs/operations.md shows is this run's, but for times, hashes and versions.
	shown := regexp.MustCompile("(?s)What the run printed.*?```text\n(.*?)```").FindStringSubmatch(string(doc))
	if shown == nil {
		t.Fatal("docs/operations.md shows no output of the walkthrough")
	}
	if got, want := normalizeTranscript(strings.ReplaceAll(out, w.root, "")), normalizeTranscript(shown[1]); got != want {
		t.Errorf("docs/operations.md shows other output than the walkthrough printed; update it:\n--- shown\n%s\n--- printed\n%s", want, got)
	}
	// The service the unit started reads its database URL from the secret file: make a lease
	// through the console on the same database, for the backup to keep.
	env := w.envFile()
	console := func(script string) string {
		cmd := exec.Command(filepath.Join(w.root, "usr/local/bin/quartermaster"), "console")
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader(script)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("console: %v\n%s", err, b)
		}
		return string(b)
	}
	if got := console("alice@acme.example: /gpu request 1 interactive for 2h\n"); !strings.Contains(got, "L-1 is active") {
		t.Fatalf("console on the installed database: %s", got)
	}
	// A SQLite install's file, for the SQLite half of the backup section.
	sqliteDB := filepath.Join(w.root, "var/lib/quartermaster/data/quartermaster.db")
	if err := os.MkdirAll(filepath.Dir(sqliteDB), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(w.root, "usr/local/bin/quartermaster"), "console", "--db", "sqlite:"+sqliteDB)
	cmd.Env = append(os.Environ(), "QM_POLICY=", "QM_DATABASE_URL=", "QM_DATABASE_URL_FILE=")
	cmd.Stdin = strings.NewReader("bob@acme.example: /gpu request 1 interactive for 1h\n")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("console on SQLite: %v\n%s", err, b)
	}

	blocks := shBlocks(t, string(doc), "<!-- backup:begin -->", "<!-- backup:end -->")
	if len(blocks) != 4 {
		t.Fatalf("the backup section has %d sh blocks; the test knows 4 (dump, restore, SQLite backup, SQLite restore)", len(blocks))
	}
	w.run(blocks[0])
	// Disaster: the service stops and the leases are gone.
	w.run("systemctl stop quartermaster")
	w.psql("DELETE FROM lease_events; DELETE FROM leases")
	if got := console("alice@acme.example: /gpu status L-1\n"); strings.Contains(got, "active") {
		t.Fatalf("the lease survived its deletion: %s", got)
	}
	restored := w.run(blocks[1])
	if !strings.Contains(restored, fmt.Sprintf("postgres: %d of %d migrations applied", len(migrations), len(migrations))) {
		t.Errorf("migrate status after the restore:\n%s", restored)
	}
	if got := console("alice@acme.example: /gpu status L-1\n"); !strings.Contains(got, "active") {
		t.Errorf("after the restore L-1 is not back: %s", got)
	}
	if got := w.run(blocks[2]); !strings.Contains(got, "ok") {
		t.Errorf("the SQLite backup's integrity check: %q", got)
	}
	b, err := exec.Command("sqlite3", filepath.Join(w.root, "var/backups/quartermaster/quartermaster.db"), "SELECT user_name FROM leases").CombinedOutput()
	if err != nil || strings.TrimSpace(string(b)) != "bob@acme.example" {
		t.Errorf("the SQLite backup holds %q (%v), want bob's lease", b, err)
	}
	// Disaster on SQLite: the lease is gone from the file. The restore, run as root, brings it
	// back in a file the service's user owns (the unit runs serve as quartermaster, and a file of
	// root's mode 0600 is one it cannot open), with no write-ahead log of the lost file beside it.
	if b, err := exec.Command("sqlite3", sqliteDB, "DELETE FROM lease_events; DELETE FROM leases").CombinedOutput(); err != nil {
		t.Fatalf("delete the SQLite leases: %v\n%s", err, b)
	}
	restoredSQLite := w.run(blocks[3])
	b, err = exec.Command("sqlite3", sqliteDB, "SELECT user_name FROM leases").CombinedOutput()
	if err != nil || strings.TrimSpace(string(b)) != "bob@acme.example" {
		t.Errorf("after the SQLite restore the file holds %q (%v), want bob's lease", b, err)
	}
	if want := "stand-in chown: quartermaster:quartermaster " + sqliteDB; !strings.Contains(restoredSQLite, want) {
		t.Errorf("the SQLite restore does not give the restored file to the service's user (%q); it printed:\n%s", want, restoredSQLite)
	}
	for _, side := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(sqliteDB + side); err == nil {
			t.Errorf("the SQLite restore left %s beside the restored file", sqliteDB+side)
		}
	}
}

// envFile is the installed environment file's settings, as the unit passes them.
func (w *walkthrough) envFile() []string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.root, "etc/quartermaster/quartermaster.env"))
	if err != nil {
		w.t.Fatal(err)
	}
	var env []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			env = append(env, line)
		}
	}
	return env
}

func (w *walkthrough) psql(sql string) {
	w.t.Helper()
	cmd := exec.Command("psql", "-X", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(w.pg.Port), "-U", "postgres", "-d", "quartermaster", "-c", sql)
	if b, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("psql %s: %v\n%s", sql, err, b)
	}
}

// TestSystemdUnitVerifies: systemd-analyze verify accepts the unit (with its binary where the unit
// names it, under a temporary root), and the unit starts what the walkthrough ran.
func TestSystemdUnitVerifies(t *testing.T) {
	t.Parallel()
	unit, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "systemd", "quartermaster.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ExecStart=/usr/local/bin/quartermaster serve", "EnvironmentFile=/etc/quartermaster/quartermaster.env",
		"User=quartermaster", "StateDirectory=quartermaster", "WorkingDirectory=/var/lib/quartermaster", "NoNewPrivileges=yes"} {
		if !strings.Contains(string(unit), want+"\n") {
			t.Errorf("the unit lacks %s", want)
		}
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed; the unit's lines were checked above")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "quartermaster")
	self, _ := os.Executable()
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(unit), "/usr/local/bin/quartermaster", bin)
	path := filepath.Join(dir, "quartermaster.service")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	// Outside a booted systemd, verify also reports the host's own units it cannot load; only
	// lines about this unit count.
	var ours []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "quartermaster.service") {
			ours = append(ours, line)
		}
	}
	if len(ours) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, strings.Join(ours, "\n"))
	}
}

// normalizeTranscript masks what differs from run to run: times, commit hashes, versions, pids,
// and curl's word while it waits for the service to listen.
func normalizeTranscript(s string) string {
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if strings.HasPrefix(line, "curl: (7)") {
			continue
		}
		line = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`).ReplaceAllString(line, "TIME")
		line = regexp.MustCompile(`\b[0-9a-f]{7,40}(-dirty)?\b`).ReplaceAllString(line, "HASH")
		line = regexp.MustCompile(`go1\.\d+(\.\d+)? \S+`).ReplaceAllString(line, "GO")
		line = regexp.MustCompile(`^quartermaster \S+$`).ReplaceAllString(line, "quartermaster VERSION")
		line = regexp.MustCompile(` \(pid \d+\)`).ReplaceAllString(line, "")
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
