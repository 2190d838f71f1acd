package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
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
