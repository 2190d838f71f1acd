package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// built is this command's binary, built once for the tests that run it as a process.
var built struct {
	once sync.Once
	dir  string
	path string
	out  []byte
	err  error
}

// quartermasterBinary builds the quartermaster binary the first time a test asks for it and
// returns its path; TestMain removes it when the tests end.
func quartermasterBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "quartermaster-test-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "quartermaster")
		built.out, built.err = exec.Command("go", "build", "-o", built.path, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.path
}

// runBinary runs the quartermaster binary (quartermasterBinary) with args in dir, its input empty
// (a pipe, not a terminal, as runQM's), with this process's environment and env's settings after
// it, and returns its exit code and output as runQM does. A test that sets the environment for one
// command, or runs it in another directory, can run in parallel this way; and the binary is built
// without the race detector, under which a command that computes for long (a replay) takes many
// times as long. An entry of env without "=" (a name alone) unsets that variable.
func runBinary(t *testing.T, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runBinaryInput(t, dir, env, "", args...)
}

// runBinaryInput is runBinary with input as the command's input (a console's script).
func runBinaryInput(t *testing.T, dir string, env []string, input string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(quartermasterBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = binaryEnv(os.Environ(), env)
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || !exit.Exited() {
			t.Fatalf("quartermaster %v: %v\n%s", args, err, errb.String())
		}
		code = exit.ExitCode()
	}
	return code, out.String(), errb.String()
}

// binaryEnv is base with env's settings after it; an entry of env that is a name alone (no "=")
// takes that variable out of base.
func binaryEnv(base, env []string) []string {
	out := make([]string, 0, len(base)+len(env))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(env, name) {
			out = append(out, kv)
		}
	}
	for _, kv := range env {
		if strings.Contains(kv, "=") {
			out = append(out, kv)
		}
	}
	return out
}

// TestMain runs two parallel tests a core unless -test.parallel says otherwise (the default is one
// a core): most of this package's tests wait on the servers, processes, retries and timeouts they
// start rather than on the CPU, so with one a core the cores mostly idle. Not more: the chat
// adapters answer within the platforms' deadlines (a second to tell who someone is on Discord),
// and with four a core beside make test's other packages, on two cores loaded by other builds too,
// a lookup ran past its second.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
	for _, k := range shellSettings {
		os.Unsetenv(k)
	}
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
