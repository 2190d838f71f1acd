package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// consoleReading runs the console, without --json, on a fresh database with stdin as its input, and
// returns what it wrote to standard output.
func consoleReading(t *testing.T, stdin *os.File) string {
	t.Helper()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"console", "--clock", "2026-11-30T15:00:00Z",
		"--db", "sqlite:" + filepath.Join(dir, "quartermaster.db"), "--reports", filepath.Join(dir, "reports")}
	if code := run(context.Background(), args, stdin, &out, &errb); code != 0 {
		t.Fatalf("console exited %d: %s", code, errb.String())
	}
	return out.String()
}

// TestConsoleOnDevNullOrAPipeIsAScript: console < /dev/null printed the banner and a prompt, as if
// its input were a terminal (/dev/null is a character device, as a terminal is). Only a terminal
// gets them: /dev/null and a pipe are read as scripts, with nothing but the answers written.
func TestConsoleOnDevNullOrAPipeIsAScript(t *testing.T) {
	t.Parallel()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if out := consoleReading(t, null); out != "" {
		t.Errorf("console < /dev/null wrote %q; want nothing", out)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := w.WriteString("alice@acme.example: /gpu help\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	out := consoleReading(t, r)
	if strings.Contains(out, "Quartermaster console.") || strings.Contains(out, "> ") {
		t.Errorf("console with a pipe for input wrote a banner or a prompt:\n%s", out)
	}
	if !strings.Contains(out, "/gpu request") {
		t.Errorf("console with a pipe for input did not answer /gpu help:\n%s", out)
	}
}
