// Package deploy holds the tests of the install artefacts: the Dockerfile, the systemd unit and
// its environment file, and the Helm chart.
package deploy

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/testkit"
	"github.com/acme/quartermaster/internal/workload"
)

const root = ".."

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	op, args string
	line     int
}

type stage struct {
	from, name string
	ins        []instruction
}

// parseDockerfile reads the instructions of each stage, with ARGs declared before the first FROM.
func parseDockerfile(t *testing.T, path string) (globalArgs map[string]string, stages []*stage) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	globalArgs = map[string]string{}
	sc := bufio.NewScanner(f)
	var cur strings.Builder
	start, n := 0, 0
	flush := func() {
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		if text == "" {
			return
		}
		op, args, _ := strings.Cut(text, " ")
		in := instruction{strings.ToUpper(op), strings.TrimSpace(args), start}
		if in.op == "FROM" {
			s := &stage{}
			f := strings.Fields(in.args)
			s.from = f[0]
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
			return
		}
		if len(stages) == 0 {
			if in.op == "ARG" {
				k, v, _ := strings.Cut(in.args, "=")
				globalArgs[k] = v
			}
			return
		}
		st := stages[len(stages)-1]
		st.ins = append(st.ins, in)
	}
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`) + " ")
			continue
		}
		cur.WriteString(line)
		flush()
	}
	flush()
	return globalArgs, stages
}

func find(s *stage, op string) []instruction {
	var out []instruction
	for _, in := range s.ins {
		if in.op == op {
			out = append(out, in)
		}
	}
	return out
}

// commands lists the directories under cmd/: each is a binary the image must carry.
func commands(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, "cmd", "*", "main.go"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no commands under cmd/: %v", err)
	}
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Base(filepath.Dir(d)))
	}
	return out
}

// TestDockerfile checks the Dockerfile's stages and paths, then runs its build step with go build
// here, exactly as written (only /out/ moved to a temporary directory), and runs the binaries it
// makes. Where a container engine answers (docker info), it also builds the image, runs
// `quartermaster version` and every binary's --help in it, and serve on the test PostgreSQL until
// /readyz says the database is ok; where none does (as in this project's CI), it says so.
func TestDockerfile(t *testing.T) {
	args, stages := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	if len(stages) < 2 {
		t.Fatalf("the Dockerfile has %d stages; want a build stage and a small run stage", len(stages))
	}
	build, run := stages[0], stages[len(stages)-1]
	if build.name != "build" || !strings.HasPrefix(build.from, "golang:${GO_VERSION}") {
		t.Errorf("the first stage is %q AS %q; want golang:${GO_VERSION}… AS build", build.from, build.name)
	}
	gomod, _ := os.ReadFile(filepath.Join(root, "go.mod"))
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if goVersion == nil || args["GO_VERSION"] != string(goVersion[1]) {
		t.Errorf("ARG GO_VERSION=%s, but go.mod asks for go %s", args["GO_VERSION"], goVersion[1])
	}
	if strings.Contains(run.from, "golang") {
		t.Errorf("the run stage is %s: the toolchain does not belong in the image", run.from)
	}
	users := find(run, "USER")
	if len(users) == 0 {
		t.Fatal("the run stage sets no USER: the image would run as root")
	}
	if u := strings.Split(users[len(users)-1].args, ":")[0]; u == "root" || u == "0" {
		t.Errorf("the run stage runs as %s", u)
	}
	var buildCmd string
	for _, in := range find(build, "RUN") {
		if i := strings.Index(in.args, "go build"); i >= 0 {
			buildCmd = in.args[i:]
		}
	}
	if !strings.Contains(buildCmd, "-o /out/ ./cmd/...") {
		t.Fatalf("the build stage does not build every command into /out/: %q", buildCmd)
	}
	copied := false
	for _, in := range find(run, "COPY") {
		if in.args == "--from=build /out/ /usr/local/bin/" {
			copied = true
		}
	}
	if !copied {
		t.Error("the run stage does not COPY --from=build /out/ /usr/local/bin/")
	}
	entry := find(run, "ENTRYPOINT")
	if len(entry) != 1 || entry[0].args != `["/usr/local/bin/quartermaster"]` {
		t.Errorf("ENTRYPOINT %v; want [\"/usr/local/bin/quartermaster\"]", entry)
	}
	if testing.Short() {
		t.Skip("-short: not building the binaries")
	}

	// The build step, here: ${VERSION} and ${COMMIT} as a release would pass them.
	out := t.TempDir()
	cmdline := strings.NewReplacer("${VERSION}", "v9.8.7-test", "${COMMIT}", "0123456789abcdef0123456789abcdef01234567",
		"-o /out/", "-o "+out+"/").Replace(buildCmd)
	sh := exec.Command("sh", "-c", cmdline)
	sh.Dir = root
	sh.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS=-O2 -g -Wno-deprecated-declarations")
	if b, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, b)
	}
	for _, c := range commands(t) {
		if _, err := os.Stat(filepath.Join(out, c)); err != nil {
			t.Errorf("the build step made no %s: %v", c, err)
		}
	}
	v, err := exec.Command(filepath.Join(out, "quartermaster"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(v), "quartermaster v9.8.7-test") || !strings.Contains(string(v), "0123456789abcdef0123456789abcdef01234567") {
		t.Errorf("the built quartermaster version: %v\n%s", err, v)
	}

	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Log("no container engine answers `docker info` here: the image itself was not built; its build step ran with go build above")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tag := "quartermaster-test:" + strings.ToLower(t.Name())
	b := exec.CommandContext(ctx, "docker", "build", "--build-arg", "VERSION=v9.8.7-test", "-t", tag, ".")
	b.Dir = root
	if o, err := b.CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, tail(o))
	}
	defer exec.Command("docker", "rmi", "-f", tag).Run()
	o, err := exec.CommandContext(ctx, "docker", "run", "--rm", tag, "version").CombinedOutput()
	if err != nil || !bytes.Contains(o, []byte("quartermaster v9.8.7-test")) {
		t.Errorf("docker run %s version: %v\n%s", tag, err, o)
	}
	for _, c := range commands(t) {
		o, err := exec.CommandContext(ctx, "docker", "run", "--rm", "--entrypoint", "/usr/local/bin/"+c, tag, "--help").CombinedOutput()
		if err != nil && !bytes.Contains(o, []byte("usage")) {
			t.Errorf("%s is not runnable in the image: %v\n%s", c, err, o)
		}
	}
	// serve in the image, on the test PostgreSQL (host network: the database listens on loopback).
	db := storetest.Postgres(t)
	port := testkit.FreePort(t)
	name := "qm-test-" + strconv.Itoa(port)
	serveCmd := exec.CommandContext(ctx, "docker", "run", "-d", "--name", name, "--network", "host",
		"-e", "QM_DATABASE_URL="+db, tag, "serve", "--demo", "--http", "127.0.0.1:"+strconv.Itoa(port))
	if o, err := serveCmd.CombinedOutput(); err != nil {
		t.Fatalf("docker run serve: %v\n%s", err, o)
	}
	defer exec.Command("docker", "rm", "-f", name).Run()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte("database postgres: ok")) {
				return
			}
		}
		if time.Now().After(deadline) {
			logs, _ := exec.Command("docker", "logs", name).CombinedOutput()
			t.Fatalf("serve in the image is not ready on PostgreSQL: %v\n%s", err, tail(logs))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func tail(b []byte) string {
	if len(b) > 4000 {
		return string(b[len(b)-4000:])
	}
	return string(b)
}

// TestTheSystemdUnitLetsTheSlurmBackendWriteJobDirectories: the Slurm backend creates each lease's
// job directory (<team storage>/.quartermaster/<lease>/) on the service's host before sbatch. Under
// ProtectSystem=strict systemd mounts every path read-only that ReadWritePaths= does not name, so
// the unit must name the default storage root (QM_STORAGE_ROOT's default), and docs/operations.md
// must say to add each team's storage.path; otherwise every lease on Slurm fails with "mkdir …:
// read-only file system".
func TestTheSystemdUnitLetsTheSlurmBackendWriteJobDirectories(t *testing.T) {
	unit := string(mustRead(t, filepath.Join(root, "deploy", "systemd", "quartermaster.service")))
	strict := false
	var writable []string
	for _, line := range strings.Split(unit, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		switch k {
		case "ProtectSystem":
			strict = v == "strict"
		case "ReadWritePaths":
			for _, p := range strings.Fields(v) {
				writable = append(writable, strings.TrimLeft(p, "-+"))
			}
		}
	}
	if !strict {
		return
	}
	covered := func(dir string) bool {
		for _, w := range writable {
			if dir == w || strings.HasPrefix(dir, strings.TrimSuffix(w, "/")+"/") {
				return true
			}
		}
		return false
	}
	if !covered(workload.DefaultStorageRoot) {
		t.Errorf("the unit has ProtectSystem=strict but no ReadWritePaths= covering %s, the default team storage (QM_STORAGE_ROOT): the Slurm backend cannot create a lease's job directory there (ReadWritePaths=%v)",
			workload.DefaultStorageRoot, writable)
	}
	ops := string(mustRead(t, filepath.Join(root, "docs", "operations.md")))
	if !strings.Contains(ops, "ReadWritePaths=") {
		t.Error("docs/operations.md does not say to add each team's storage.path to ReadWritePaths= for the Slurm backend")
	}
}
