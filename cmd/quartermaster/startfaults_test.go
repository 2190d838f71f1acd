package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// A listen address another process holds is refused in one sentence that names the address, the
// setting that gave it (the flag and the variable) and a free port the operator can use instead.
func TestServeOnAPortInUseNamesTheSettingAndAFreePort(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	addr := held.Addr().String()
	for _, c := range []struct {
		env     map[string]string
		args    []string
		example *regexp.Regexp // the value that works, as the operator wrote the setting
	}{
		{args: []string{"--http", addr}, example: regexp.MustCompile(`--http (127\.0\.0\.1:\d+)`)},
		{env: map[string]string{"QM_HTTP_ADDR": addr}, example: regexp.MustCompile(`QM_HTTP_ADDR=(127\.0\.0\.1:\d+)`)},
	} {
		clearEnv(t)
		t.Setenv("QM_DATA_DIR", t.TempDir())
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var stderr bytes.Buffer
		code := run(ctx, append([]string{"serve", "--demo"}, c.args...), nil, io.Discard, &stderr)
		cancel()
		msg := strings.TrimSpace(stderr.String())
		if code == 0 || strings.Count(msg, "\n") != 0 {
			t.Fatalf("%v %v: exit %d, want a refusal in one line before anything starts; got %q", c.env, c.args, code, msg)
		}
		for _, w := range []string{addr, "--http", "QM_HTTP_ADDR", "already"} {
			if !strings.Contains(msg, w) {
				t.Errorf("%v %v: %q does not say %q", c.env, c.args, msg, w)
			}
		}
		m := c.example.FindStringSubmatch(msg)
		if m == nil || m[1] == addr {
			t.Errorf("%v %v: %q offers no other address in the form %s", c.env, c.args, msg, c.example)
			continue
		}
		ln, err := net.Listen("tcp", m[1])
		if err != nil {
			t.Errorf("the address offered, %s, does not work: %v", m[1], err)
			continue
		}
		ln.Close()
	}
}

// fakePostgres answers every connection's startup message with the error PostgreSQL sends when it
// refuses a login (code, message), as a server with that fault does, and returns its host:port.
func fakePostgres(t *testing.T, code, message string) string {
	return storetest.Serve(t, func(c net.Conn) {
		defer c.Close()
		var n uint32
		if binary.Read(c, binary.BigEndian, &n) != nil || n < 8 || n > 10000 {
			return
		}
		if _, err := io.CopyN(io.Discard, c, int64(n-4)); err != nil {
			return
		}
		var body bytes.Buffer
		for _, f := range [][2]string{{"S", "FATAL"}, {"V", "FATAL"}, {"C", code}, {"M", message}} {
			body.WriteString(f[0] + f[1] + "\x00")
		}
		body.WriteByte(0)
		msg := []byte{'E'}
		msg = binary.BigEndian.AppendUint32(msg, uint32(body.Len()+4))
		_, _ = c.Write(append(msg, body.Bytes()...))
	})
}

// A database serve cannot reach at start is refused in one sentence that names the setting (the
// flag and the variable), the URL without its password, and what to do about it, rather than the
// driver's words alone.
func TestServeOnADatabaseItCannotReachSaysWhatToDo(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	badPassword := fakePostgres(t, "28P01", `password authentication failed for user "qm"`)
	noRole := fakePostgres(t, "28000", `role "qm" does not exist`)
	noDB := fakePostgres(t, "3D000", `database "qm" does not exist`)
	unknownParam := fakePostgres(t, "42704", `unrecognized configuration parameter "search_pth"`)
	tmp := t.TempDir()
	locked := filepath.Join(tmp, "locked")
	if err := os.Mkdir(locked, 0o555); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 { // root writes anywhere a mode allows; /proc takes no new files from anyone
		locked = "/proc"
	}
	for _, c := range []struct {
		name    string
		url     string
		viaEnv  bool
		want    []string
		wantNot string
	}{
		{name: "nothing listens", url: "postgres://qm:hunter2@" + refused + "/qm?sslmode=disable",
			want: []string{"postgres://qm:xxxxx@" + refused + "/qm", "nothing accepts connections at " + refused, "start PostgreSQL"}},
		{name: "nothing listens, from the variable", url: "postgres://qm:hunter2@" + refused + "/qm?sslmode=disable", viaEnv: true,
			want: []string{"QM_DATABASE_URL=postgres://qm:xxxxx@" + refused + "/qm", "nothing accepts connections at " + refused}},
		{name: "an unknown host", url: "postgres://qm:hunter2@db.borealis.invalid:5432/qm?sslmode=disable", viaEnv: true,
			want: []string{"postgres://qm:xxxxx@db.borealis.invalid:5432/qm", "db.borealis.invalid", "host"}},
		{name: "a wrong password", url: "postgres://qm:hunter2@" + badPassword + "/qm?sslmode=disable",
			want: []string{"postgres://qm:xxxxx@" + badPassword + "/qm", `password of the user "qm"`, "correct the password"}},
		{name: "an unknown user", url: "postgres://qm:hunter2@" + noRole + "/qm?sslmode=disable", viaEnv: true,
			want: []string{"postgres://qm:xxxxx@" + noRole + "/qm", `role "qm" does not exist`, "CREATE ROLE qm"}},
		{name: "an unknown database", url: "postgres://qm:hunter2@" + noDB + "/qm?sslmode=disable",
			want: []string{"postgres://qm:xxxxx@" + noDB + "/qm", `database "qm" does not exist`, "createdb"}},
		{name: "an sslmode the driver does not take", url: "postgres://qm:hunter2@" + refused + "/qm?sslmode=bogus",
			want: []string{`sslmode=bogus in the URL is not a value it takes`, "disable, allow, prefer, require, verify-ca or verify-full", "e.g. --db postgres://qm:PASSWORD@" + refused + "/qm?sslmode=require"}, wantNot: "pq:"},
		{name: "a connect_timeout that is no number", url: "postgres://qm:hunter2@" + refused + "/qm?connect_timeout=5s&sslmode=disable", viaEnv: true,
			want: []string{`connect_timeout=5s in the URL is not a value it takes`, "e.g. QM_DATABASE_URL=postgres://qm:PASSWORD@" + refused + "/qm?sslmode=disable"}, wantNot: "strconv"},
		{name: "a parameter PostgreSQL does not know", url: "postgres://qm:hunter2@" + unknownParam + "/qm?search_pth=qm&sslmode=disable",
			want: []string{`"search_pth" in the URL is no parameter PostgreSQL knows`, "did you mean search_path?", "e.g. --db postgres://qm:PASSWORD@" + unknownParam + "/qm?search_path=qm&sslmode=disable"}, wantNot: "42704"},
		{name: "sslmode misspelled, to a server without SSL", url: "postgres://qm:hunter2@" + unknownParam + "/qm?sslmod=disable", viaEnv: true,
			want: []string{"takes no SSL connections", `"sslmod" in the URL is no parameter; did you mean sslmode?`, "e.g. QM_DATABASE_URL=postgres://qm:PASSWORD@" + unknownParam + "/qm?sslmode=disable"}},
		{name: "a port that is no number", url: "postgres://qm:hunter2@127.0.0.1:abc/qm?sslmode=disable", viaEnv: true,
			want: []string{`the port "abc" in the URL is not a number`, "e.g. QM_DATABASE_URL=postgres://qm:PASSWORD@127.0.0.1:5432/qm?sslmode=disable"}, wantNot: "binary_parameters"},
		{name: "a SQLite file in a missing directory", url: "sqlite:" + filepath.Join(tmp, "no", "such", "qm.db"),
			want: []string{"sqlite:" + filepath.Join(tmp, "no", "such", "qm.db"), "mkdir -p " + filepath.Join(tmp, "no", "such")}},
		{name: "a SQLite file in a directory it cannot write", url: "sqlite:" + filepath.Join(locked, "qm.db"), viaEnv: true,
			want: []string{"sqlite:" + filepath.Join(locked, "qm.db"), "cannot write", locked}, wantNot: "(14)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv("QM_DATA_DIR", t.TempDir())
			args := []string{"serve", "--demo", "--http", "127.0.0.1:0"}
			if c.viaEnv {
				t.Setenv("QM_DATABASE_URL", c.url)
			} else {
				args = append(args, "--db", c.url)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var stderr bytes.Buffer
			code := run(ctx, args, nil, io.Discard, &stderr)
			msg := strings.TrimSpace(stderr.String())
			if code == 0 || strings.Count(msg, "\n") != 0 {
				t.Fatalf("exit %d, want a refusal in one line; got %q", code, msg)
			}
			// It names where the URL came from, and not the setting that did not give it.
			from, other := "--db ", "QM_DATABASE_URL"
			if c.viaEnv {
				from, other = "QM_DATABASE_URL=", "--db"
			}
			for _, w := range append([]string{from}, c.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, other) {
				t.Errorf("%q names %s, which did not give the database", msg, other)
			}
			if strings.Contains(msg, "hunter2") {
				t.Errorf("%q shows the password", msg)
			}
			if c.wantNot != "" && strings.Contains(msg, c.wantNot) {
				t.Errorf("%q still says %q", msg, c.wantNot)
			}
		})
	}
}

// migrate status (and down) on a SQLite file that does not exist says so, and how to create it,
// and creates nothing: no database file, no lock file, no data directory.
func TestMigrateStatusOnAMissingSQLiteFileCreatesNothing(t *testing.T) {
	for _, verb := range []string{"status", "down"} {
		clearEnv(t)
		dir := t.TempDir()
		file := filepath.Join(dir, "qm.db")
		code, out, stderr := runQM("migrate", verb, "--db", "sqlite:"+file)
		msg := strings.TrimSpace(stderr)
		if code == 0 || out != "" || strings.Count(msg, "\n") != 0 {
			t.Errorf("migrate %s: exit %d, out %q, err %q", verb, code, out, msg)
		}
		for _, w := range []string{file, "does not exist yet", "quartermaster migrate up --db sqlite:" + file} {
			if !strings.Contains(msg, w) {
				t.Errorf("migrate %s: %q does not say %q", verb, msg, w)
			}
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("migrate %s made %v", verb, left)
		}

		// The default file, under QM_DATA_DIR.
		data := filepath.Join(dir, "data")
		t.Setenv("QM_DATA_DIR", data)
		code, _, stderr = runQM("migrate", verb)
		if code == 0 || !strings.Contains(stderr, "does not exist yet") || !strings.Contains(stderr, "quartermaster migrate up") {
			t.Errorf("migrate %s with the default file: exit %d, %q", verb, code, stderr)
		}
		if _, err := os.Stat(data); err == nil {
			t.Errorf("migrate %s made the data directory %s", verb, data)
		}
	}
	// Once created, status lists the migrations.
	file := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	if code, _, stderr := runQM("migrate", "up", "--db", file); code != 0 {
		t.Fatalf("migrate up: exit %d, %s", code, stderr)
	}
	if code, out, stderr := runQM("migrate", "status", "--db", file); code != 0 || !strings.Contains(out, "applied") {
		t.Errorf("migrate status after up: exit %d, %q, %q", code, out, stderr)
	}
}

// migrate status (and down) on a SQLite file in a directory that does not exist yet says how to
// create it, and the command it gives, typed back in a shell, creates that database: status then
// lists its migrations applied.
func TestMigrateStatusOnASQLiteFileInAMissingDirectoryGivesACommandThatWorks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := quartermasterBinary(t)
	for _, verb := range []string{"status", "down"} {
		clearEnv(t)
		file := filepath.Join(t.TempDir(), "state", "ledger", "fjord.db")
		code, _, stderr := runQM("migrate", verb, "--db", "sqlite:"+file)
		msg := strings.TrimSpace(stderr)
		_, create, ok := strings.Cut(msg, "create one with ")
		create, _, _ = strings.Cut(create, " (serve")
		if code == 0 || !ok || create == "" {
			t.Fatalf("migrate %s: exit %d, %q; want how to create the database", verb, code, msg)
		}
		sh := exec.Command("bash", "-c", create)
		sh.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
		if b, err := sh.CombinedOutput(); err != nil {
			t.Fatalf("migrate %s says to create the database with %q, which fails: %v\n%s", verb, create, err, b)
		}
		if code, out, stderr := runQM("migrate", "status", "--db", "sqlite:"+file); code != 0 || !strings.Contains(out, "applied") {
			t.Errorf("after %q, migrate status: exit %d, %q, %q", create, code, out, stderr)
		}
	}
}

// A PostgreSQL user that may connect but not create tables (a database it does not own, on
// PostgreSQL 15 and later, whose public schema takes new tables from its owner only) is refused
// at migration naming the setting, the user and the schema, and the GRANT that lets it, rather
// than the migration library's "failed to create version table … permission denied".
func TestMigratingAsAUserThatMayNotCreateTablesSaysWhatToGrant(t *testing.T) {
	storetest.RequirePostgres(t)
	base, err := neturl.Parse(storetest.PostgresDSN())
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("postgres", base.String())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1e9)
	role, schema := "qm_norights_"+suffix, "qm_locked_"+suffix
	for _, stmt := range []string{
		"CREATE ROLE " + role + " LOGIN PASSWORD 'hunter2'",
		"CREATE SCHEMA " + schema, // owned by the admin; others may not create in it
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role,
	} {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		_, _ = admin.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE")
		_, _ = admin.Exec("DROP ROLE IF EXISTS " + role)
	})
	u := *base
	u.User = neturl.UserPassword(role, "hunter2")
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	for _, args := range [][]string{
		{"migrate", "up", "--db", u.String()},
		{"serve", "--demo", "--http", "127.0.0.1:0", "--db", u.String()},
	} {
		clearEnv(t)
		t.Setenv("QM_DATA_DIR", t.TempDir())
		code, _, stderr := runQM(args...)
		msg := strings.TrimSpace(stderr)
		if code == 0 || strings.Count(msg, "\n") != 0 {
			t.Errorf("%s: exit %d, want a refusal in one line: %q", args[0], code, msg)
			continue
		}
		if strings.Contains(msg, "QM_DATABASE_URL") {
			t.Errorf("%s: %q names QM_DATABASE_URL, though --db gave the URL", args[0], msg)
		}
		for _, w := range []string{"--db", role + ":xxxxx@", fmt.Sprintf("%q may not create tables in the schema %s", role, schema),
			"GRANT CREATE ON SCHEMA " + schema + " TO " + role} {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q does not say %q", args[0], msg, w)
			}
		}
		if strings.Contains(msg, "hunter2") {
			t.Errorf("%s: %q shows the password", args[0], msg)
		}
	}
}

// agent-token list and revoke on a SQLite file that does not exist (a wrong path, or a directory
// the service never ran in) say so and create nothing, rather than make an empty database and
// report that it holds no tokens; create, like serve, makes the database.
func TestAgentTokenListOnAMissingSQLiteFileCreatesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "qm.db")
	for _, args := range [][]string{{"agent-token", "list"}, {"agent-token", "revoke", "gpu-01"}} {
		code, out, stderr := runQM(append(args, "--db", "sqlite:"+file)...)
		if code == 0 || out != "" || !strings.Contains(stderr, "does not exist yet") || !strings.Contains(stderr, file) {
			t.Errorf("%v: exit %d, out %q, err %q", args, code, out, stderr)
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("%v made %v", args, left)
		}
	}
	if code, out, stderr := runQM("agent-token", "create", "gpu-01", "--db", "sqlite:"+file); code != 0 || !strings.HasPrefix(out, "qma_") {
		t.Fatalf("create: exit %d, %q, %q", code, out, stderr)
	}
	if code, out, stderr := runQM("agent-token", "list", "--db", "sqlite:"+file); code != 0 || !strings.Contains(out, "gpu-01") {
		t.Errorf("list after create: exit %d, %q, %q", code, out, stderr)
	}
}

// A misspelled flag, or a flag without its value, is refused naming that flag and an example of
// it that works, not Go's "flag provided but not defined: -htp" with an example of another flag:
// the command as typed, the flag put right (its value as typed where one was).
func TestAFlagMistakeGetsAnExampleOfThatFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{args: []string{"serve", "--htp", ":8080"}, want: []string{"--htp is not a flag of quartermaster serve", "--http", "quartermaster serve --http :8080"}},
		{args: []string{"serve", "--demo", "--http"}, want: []string{"--http needs a value", "quartermaster serve --demo --http :8080"}},
		{args: []string{"serve", "--demo=maybe"}, want: []string{`--demo takes no value`, "quartermaster serve --demo"}},
		{args: []string{"migrate", "up", "--database", "sqlite:x.db"}, want: []string{"--database is not a flag of quartermaster migrate", "quartermaster migrate up --db sqlite:x.db"}},
		{args: []string{"migrate", "status", "--db"}, want: []string{"--db needs a value", "quartermaster migrate status --db sqlite:data/quartermaster.db"}},
		{args: []string{"agent-token", "list", "--dbb", "sqlite:x.db"}, want: []string{"--dbb is not a flag of quartermaster agent-token", "quartermaster agent-token list --db sqlite:x.db"}},
		{args: []string{"agent-token", "create", "gpu-07", "--d"}, want: []string{"--d is not a flag", "e.g. quartermaster agent-token create gpu-07"}},
		// Every other command says it in the same words, with the flag as it was typed.
		{args: []string{"version", "--json"}, want: []string{"--json is not a flag of quartermaster version", "e.g. quartermaster version"}},
		{args: []string{"console", "--polcy", "p.yaml"}, want: []string{"--polcy is not a flag of quartermaster console", "the nearest is --policy", "quartermaster console --policy p.yaml"}},
		{args: []string{"console", "--clock"}, want: []string{"--clock needs a value", "quartermaster console --clock 2026-11-30T09:00:00Z"}},
		{args: []string{"templates", "list", "--polcy", "p.yaml"}, want: []string{"--polcy is not a flag of quartermaster templates list", "quartermaster templates list --policy p.yaml"}},
		{args: []string{"templates", "show", "pytorch-ddp", "--policy"}, want: []string{"--policy needs a value", "quartermaster templates show pytorch-ddp --policy docs/quartermaster.example.yaml"}},
		{args: []string{"templates", "render", "pytorch-ddp", "--gpu", "2"}, want: []string{"--gpu is not a flag of quartermaster templates render", "the nearest is --gpus", "quartermaster templates render pytorch-ddp --gpus 2"}},
		{args: []string{"discord", "register", "--gild", "1"}, want: []string{"--gild is not a flag of quartermaster discord register", "the nearest is --guild", "quartermaster discord register --guild 1 "}},
		{args: []string{"discord", "register", "--print=maybe"}, want: []string{"--print takes no value", "quartermaster discord register --print --policy docs/quartermaster.example.yaml"}},
		{args: []string{"predict", "eval", "--tarce", "t.swf"}, want: []string{"--tarce is not a flag of quartermaster predict eval", "the nearest is --trace", "quartermaster predict eval --trace t.swf"}},
		{args: []string{"policy", "check", "--strict", "selkie.yaml"}, want: []string{"--strict is not a flag of quartermaster policy check", "e.g. quartermaster policy check selkie.yaml"}},
		{args: []string{"policy", "check", "--polcy", "selkie.yaml"}, want: []string{"--polcy is not a flag of quartermaster policy check", "the nearest is --policy", "e.g. quartermaster policy check --policy selkie.yaml"}},
		{args: []string{"policy", "chek", "selkie.yaml"}, want: []string{`"chek" is not a policy command`, "the nearest is check", "e.g. quartermaster policy check selkie.yaml"}},
		{args: []string{"predict", "eval", "--json=2"}, want: []string{"--json takes no value", "quartermaster predict eval --json --trace testdata/traces/KTH-SP2-1996-2.1-cln.swf.gz"}},
		// A value a flag does not take is refused with the command as typed, that value put right.
		{args: []string{"templates", "render", "jupyterlab", "--backend", "slurmm", "root=nb"}, want: []string{`--backend is slurm or kubernetes, not "slurmm"`, "e.g. quartermaster templates render jupyterlab --backend slurm root=nb"}},
	} {
		clearEnv(t)
		t.Setenv("QM_DATA_DIR", t.TempDir())
		code, _, stderr := runQM(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Count(msg, "\n") != 0 {
			t.Errorf("%v: exit %d, want 2 and one line: %q", c.args, code, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: %q does not say %q", c.args, msg, w)
			}
		}
	}
}

// sqlite:~/qm.db reaches the service with the ~ as written (a shell expands ~ only at the start of
// a word): it is refused saying so, with the path written out, rather than asking for a
// directory named ~ that `mkdir -p ~` would never make.
func TestASQLitePathUnderTildeIsWrittenOut(t *testing.T) {
	clearEnv(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	code, _, stderr := runQM("migrate", "up", "--db", "sqlite:~/qm.db")
	msg := strings.TrimSpace(stderr)
	if code == 0 || strings.Count(msg, "\n") != 0 || strings.Contains(msg, "mkdir") {
		t.Fatalf("exit %d, %q", code, msg)
	}
	for _, w := range []string{"~", "--db sqlite:" + filepath.Join(home, "qm.db")} {
		if !strings.Contains(msg, w) {
			t.Errorf("%q does not say %q", msg, w)
		}
	}
	if _, err := os.Stat("~"); err == nil {
		t.Errorf("a directory named ~ was made")
	}
}

// A misspelled word where a command takes its sub-command (templates lst, migrate stauts) is
// answered in one sentence with the one meant and the command typed back put right, as a
// misspelled command or flag is.
func TestAMisspelledSubcommandIsNamedWithTheOneMeant(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"templates", "lst", "jax"}, `quartermaster templates: "lst" is not a templates command; the nearest is list, e.g. quartermaster templates list jax`},
		{[]string{"migrate", "stauts", "--db", "sqlite:qm.db"}, `quartermaster migrate: "stauts" is not a migrate command; the nearest is status, e.g. quartermaster migrate status --db sqlite:qm.db`},
		{[]string{"agent-token", "revok", "reef-01"}, `quartermaster agent-token: "revok" is not an agent-token command; the nearest is revoke, e.g. quartermaster agent-token revoke reef-01`},
		{[]string{"discord", "regster", "--print"}, `quartermaster discord: "regster" is not a discord command; the nearest is register, e.g. quartermaster discord register --print`},
		{[]string{"predict", "evl", "--trace", "t.swf"}, `quartermaster predict: "evl" is not a predict command; the nearest is eval, e.g. quartermaster predict eval --trace t.swf`},
	} {
		clearEnv(t)
		t.Setenv("QM_DATA_DIR", t.TempDir())
		code, _, stderr := runQM(c.args...)
		if msg := strings.TrimSpace(stderr); code != 2 || msg != c.want {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, msg, c.want)
		}
	}
}

// A word nowhere near any of a command's sub-commands (templates x, migrate xyzzy) is answered in
// one sentence naming it and what the command takes, with an example that works, typing back the
// database or policy given; console, which takes no words, names the word and its flags, with an
// input line of the policy's directory. Each example, run, succeeds.
func TestAWordThatIsNoSubcommandIsNamedWithWhatIsTaken(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "qm.db")
	if code, _, stderr := runQM("migrate", "up", "--db", db); code != 0 {
		t.Fatalf("migrate up: %s", stderr)
	}
	policyFile, err := filepath.Abs(filepath.Join(repoRoot, "docs", "quartermaster.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"templates", "x"}, `quartermaster templates: "x" is not a templates command; templates takes list, show or render, e.g. quartermaster templates list`},
		{[]string{"migrate", "xyzzy", "--db", db}, `quartermaster migrate: "xyzzy" is not a migrate command; migrate takes up, down or status, e.g. quartermaster migrate status --db ` + db},
		{[]string{"agent-token", "frobnicate", "--db", db}, `quartermaster agent-token: "frobnicate" is not an agent-token command; agent-token takes create, list or revoke, e.g. quartermaster agent-token list --db ` + db},
		{[]string{"discord", "extra", "--policy", policyFile}, `quartermaster discord: "extra" is not a discord command; discord takes register, e.g. quartermaster discord register --print --policy ` + policyFile},
		{[]string{"predict", "extra"}, `quartermaster predict: "extra" is not a predict command; predict takes eval, e.g. quartermaster predict eval --trace testdata/traces/KTH-SP2-1996-2.1-cln.swf.gz`},
		{[]string{"policy", "extra"}, `quartermaster policy: "extra" is not a policy command; policy takes check, e.g. quartermaster policy check docs/quartermaster.example.yaml`},
		{[]string{"console", "extra"}, `quartermaster console: console takes no words, but got "extra": it reads USER: TEXT lines from standard input and takes only the flags --backend, --clock, --db, --json, --policy and --reports, e.g. echo 'alice@acme.example: /gpu request 1 interactive for 2h' | quartermaster console`},
	} {
		clearEnv(t)
		t.Setenv("QM_DATA_DIR", t.TempDir())
		code, _, stderr := runQM(c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || msg != c.want {
			t.Errorf("%v: exit %d,\n%q; want exit 2 and\n%q", c.args, code, msg, c.want)
			continue
		}
		// The example works: run from the repository, with the console's line as its input.
		_, example, _ := strings.Cut(msg, ", e.g. ")
		input := ""
		if line, cmd, ok := strings.Cut(example, " | "); ok {
			input = strings.Trim(strings.TrimPrefix(line, "echo "), "'") + "\n"
			example = cmd
		}
		words := strings.Fields(strings.TrimPrefix(example, "quartermaster "))
		if words[0] == "predict" {
			continue // replaying the trace takes minutes: the file is there
		}
		var out, errb bytes.Buffer
		wd, _ := os.Getwd()
		if err := os.Chdir(repoRoot); err != nil {
			t.Fatal(err)
		}
		got := run(t.Context(), words, strings.NewReader(input), &out, &errb)
		_ = os.Chdir(wd)
		if got != 0 {
			t.Errorf("the example %q: exit %d, %s", example, got, errb.String())
		}
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "testdata", "traces", "KTH-SP2-1996-2.1-cln.swf.gz")); err != nil {
		t.Errorf("predict's example trace: %v", err)
	}
}
