package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/httpserve"
)

// serve's port, open to anyone who can reach it, closes connections that send their request
// bodies a byte at a time, on every endpoint that takes a body (Slack's, Discord's, the agents'),
// and keeps answering meanwhile. The body timeout is shortened so the test does not wait ten
// seconds; the limit on bodies read at once is serve's own.
func TestSlowRequestBodiesDoNotHoldServeConnectionsOpen(t *testing.T) {
	t.Parallel()
	o := serveOptions{limits: httpserve.Limits{BodyTimeout: time.Second}}
	s := startServe(t, o)
	addr := strings.TrimPrefix(s.url, "http://")
	paths := []string{"/slack/commands", "/slack/interactions", "/discord/interactions", "/api/v1/agent/reports", "/auth/login"}
	const n = 3 * httpserve.DefaultMaxBodyReads / 2
	closed := make(chan string, n)
	for i := range n {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		go func() {
			done := make(chan struct{})
			var answer []byte
			go func() {
				answer, _ = io.ReadAll(conn)
				close(done)
			}()
			_, _ = io.WriteString(conn, "POST "+paths[i%len(paths)]+" HTTP/1.1\r\nHost: qm\r\nContent-Length: 1000\r\n\r\n")
			for {
				select {
				case <-done:
					closed <- string(answer)
					return
				case <-time.After(200 * time.Millisecond):
					_, _ = conn.Write([]byte("x"))
				}
			}
		}()
	}
	code, _ := getBody(t, s.url+"/healthz")
	if code != http.StatusOK {
		t.Errorf("/healthz during the slow bodies: HTTP %d", code)
	}
	for i := range n {
		select {
		case a := <-closed:
			if !strings.HasPrefix(a, "HTTP/1.1 503") && !strings.HasPrefix(a, "HTTP/1.1 408") {
				t.Errorf("a slow body was answered %.40q", a)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%d of %d slow connections still open a minute later", n-i, n)
		}
	}
	if code, body := getBody(t, s.url+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the slow bodies: HTTP %d %s", code, body)
	}
}

// /readyz is not ready while the database is not usable: on SQLite when its file is gone from
// under the running service (as on PostgreSQL when the server stops: TestReadyzFollowsTheDatabase).
func TestReadyzIsNotReadyWhileTheDatabaseIsDown(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "qm.db")
	o := serveOptions{}
	o.app.flags.db = "sqlite:" + path
	s := startServe(t, o)
	if code, body := getBody(t, s.url+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz at start: %d %s", code, body)
	}
	if err := os.Rename(path, path+".moved"); err != nil {
		t.Fatal(err)
	}
	code, body := getBody(t, s.url+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "database sqlite: failed") {
		t.Errorf("/readyz with the database file gone: %d %q", code, body)
	}
	// The body is the one docs/operations.md quotes, with the path where it writes …, and a person
	// reads it without Go's error chain.
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile("`(database sqlite: failed: [^`]*)`").FindSubmatch(doc)
	if quoted == nil {
		t.Fatal("docs/operations.md quotes no /readyz line `database sqlite: failed: …`")
	}
	if want := strings.ReplaceAll(string(quoted[1]), "…", path); !strings.Contains(body, want+"\n") {
		t.Errorf("/readyz with the database file gone says\n%s\nnot the line docs/operations.md quotes:\n%s", body, want)
	}
	for _, chain := range []string{"store:", "stat ", "no such file"} {
		if strings.Contains(body, chain) {
			t.Errorf("/readyz with the database file gone shows %q: %q", chain, body)
		}
	}
	if err := os.Rename(path+".moved", path); err != nil {
		t.Fatal(err)
	}
	if code, body := getBody(t, s.url+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz with the file back: %d %s", code, body)
	}
}
