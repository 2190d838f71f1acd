package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An operator's `kill -HUP` (the usual way to ask a daemon to re-read its configuration) does not
// stop serve: the service reads its policy at start only, so it keeps serving on the policy it
// started with and says so in its log, naming each problem of the file on disk when that file is
// broken, or that a restart applies it when it is valid. Left to Go's default, SIGHUP ended the
// process at once, with no log line and no graceful stop, and systemd (Restart=on-failure) does
// not restart a service that SIGHUP ended.
func TestServeKeepsServingOnSIGHUPAndChecksThePolicyOnDisk(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := quartermasterBinary(t)
	good, err := os.ReadFile("../../commands/testdata/other.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(dir, "borealis.yaml")
	if err := os.WriteFile(pol, good, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--policy", pol, "--db", "sqlite:"+filepath.Join(dir, "qm.db"), "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "QM_POLICY=", "QM_DATABASE_URL=", "QM_DATABASE_URL_FILE=", "QM_LOG_FORMAT=json",
		"QM_DATA_DIR="+dir, "SLACK_BOT_TOKEN=", "DISCORD_BOT_TOKEN=", "QM_OIDC_ISSUER=")
	logs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan map[string]any)
	go func() {
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	// A bound on waiting for serve's log, not a measure of it: under the race detector, on a
	// busy machine, each load of the policy (at start and at each SIGHUP) takes seconds.
	deadline := time.After(3 * time.Minute)
	// next is the next log line whose msg contains want.
	next := func(want string) map[string]any {
		t.Helper()
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("serve ended while waiting for %q in its log", want)
				}
				if msg, _ := m["msg"].(string); strings.Contains(msg, want) {
					return m
				}
			case <-deadline:
				t.Fatalf("no %q in serve's log", want)
			}
		}
	}
	addr, _ := next("serving")["addr"].(string)
	healthy := func() {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			t.Fatalf("after SIGHUP serve does not answer: %v", err)
		}
		defer resp.Body.Close()
		if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
			t.Fatalf("after SIGHUP /readyz answers %d: %s", resp.StatusCode, b)
		}
	}

	// A broken policy on disk: serve keeps its own and names what is wrong, with the line.
	broken := strings.Replace(string(good), "    max_gpus: 2\n", "    max_gpus: lots\n", 1)
	if err := os.WriteFile(pol, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	m := next("SIGHUP")
	msg, _ := m["msg"].(string)
	problems, _ := m["problems"].(string)
	if m["level"] != "ERROR" || !strings.Contains(msg, "keeps") || !strings.Contains(problems, "borealis.yaml:12") || !strings.Contains(problems, "max_gpus") {
		t.Errorf("SIGHUP with a broken policy on disk logged %v; want an error that the service keeps the policy it started with, naming line 12's max_gpus", m)
	}
	healthy()

	// Mended: serve says a restart applies it, and still serves.
	if err := os.WriteFile(pol, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	m = next("SIGHUP")
	if msg, _ := m["msg"].(string); m["level"] != "WARN" || !strings.Contains(msg, "valid") || !strings.Contains(msg, "restart") {
		t.Errorf("SIGHUP with a valid policy on disk logged %v; want a warning that it is valid and a restart applies it", m)
	}
	healthy()

	// And SIGTERM still stops it gracefully.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The line that says it stops tells an operator why, and how long it lets work in flight
	// finish before it gives up on it (what systemd's TimeoutStopSec must exceed).
	if m := next("stopping"); m["signal"] != "SIGTERM" || m["grace"] != "20s" {
		t.Errorf("SIGTERM logged %v; want the stop to name signal SIGTERM and the grace of 20s given to work in flight", m)
	}
	next("stopped")
	done := make(chan error, 1)
	go func() {
		for range lines {
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) || err != nil {
			t.Errorf("serve stopped on SIGTERM with %v; want exit 0", err)
		}
	case <-deadline:
		t.Fatal("serve still runs after SIGTERM")
	}
}
