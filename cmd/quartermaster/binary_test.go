package main

import (
	"os"
	"os/exec"
	"path/filepath"
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

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
