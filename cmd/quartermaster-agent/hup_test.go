package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A SIGHUP (a habit for "read your files again", or a terminal that closes) does not end the
// node agent: it keeps reporting and serving /metrics, and says in its log what it reads again
// by itself. Left to Go's default, SIGHUP ended it at once, without a word, and systemd's
// Restart=on-failure does not start again a unit that SIGHUP ended.
func TestTheAgentKeepsRunningOnSIGHUP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "quartermaster-agent")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "run", "--fake", "dgxh100", "--node", "gpu-zeta-7", "--listen", addr, "--proc-root", "../../agent/testdata/proc")
	cmd.Env = append(os.Environ(), "QM_AGENT_TOKEN=", "QM_AGENT_TOKEN_FILE=", "QM_SERVICE_URL=", "QM_AGENT_FAKE=", "QM_NODE=", "QM_AGENT_LISTEN=")
	logs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(60 * time.Second)
	next := func(want string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the agent ended while waiting for %q in its log", want)
				}
				if strings.Contains(l, want) {
					return l
				}
			case <-deadline:
				t.Fatalf("no %q in the agent's log", want)
			}
		}
	}
	next("node agent started")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if l := next("SIGHUP"); !strings.Contains(l, "keeps running") || !strings.Contains(l, "restart") {
		t.Errorf("the agent logged %q on SIGHUP; want that it keeps running and that a restart takes new settings", l)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("after SIGHUP the agent serves no /metrics: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "quartermaster_agent_") {
		t.Errorf("after SIGHUP /metrics answers %d: %.300s", resp.StatusCode, b)
	}
	go func() {
		for range lines {
		}
	}()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the agent stopped on SIGTERM with %v; want exit 0", err)
		}
	case <-deadline:
		t.Fatal("the agent still runs after SIGTERM")
	}
}
