package httpserve_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/httpserve"
)

// serve runs h behind httpserve.Server with l on a loopback port and returns its address.
func serve(t *testing.T, h http.Handler, l httpserve.Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpserve.Server(h, l)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// SlowClient is a connection that sends what it is given a byte at a time, pausing between
// bytes, and notes when the server closes it.
type slowClient struct {
	conn   net.Conn
	closed chan struct{}
	mu     sync.Mutex
	got    strings.Builder
}

func dialSlow(t *testing.T, addr string) *slowClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	c := &slowClient{conn: conn, closed: make(chan struct{})}
	go func() {
		defer close(c.closed)
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			c.mu.Lock()
			c.got.Write(buf[:n])
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *slowClient) answer() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got.String()
}

// trickle writes s at once, then tail a byte every pause until the connection closes or tail
// runs out.
func (c *slowClient) trickle(s, tail string, pause time.Duration) {
	if _, err := io.WriteString(c.conn, s); err != nil {
		return
	}
	for i := 0; i < len(tail); i++ {
		select {
		case <-c.closed:
			return
		case <-time.After(pause):
		}
		if _, err := c.conn.Write([]byte{tail[i]}); err != nil {
			return
		}
	}
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	_, _ = io.WriteString(w, "got "+string(b))
})

// Many unauthenticated clients that send a request body a byte at a time are cut off: every
// connection is closed by the server (those over the limit of bodies read at once with a 503
// straight away), while requests without a body are still answered meanwhile.
func TestSlowRequestBodiesDoNotHoldConnectionsOpen(t *testing.T) {
	l := httpserve.Limits{BodyTimeout: 500 * time.Millisecond, ReadHeaderTimeout: 500 * time.Millisecond, MaxBodyReads: 8}
	addr := serve(t, ok, l)
	const n = 60
	clients := make([]*slowClient, n)
	for i := range clients {
		clients[i] = dialSlow(t, addr)
		go clients[i].trickle("POST /slack/commands HTTP/1.1\r\nHost: qm\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 400\r\n\r\n",
			strings.Repeat("x", 400), 100*time.Millisecond)
	}
	// Meanwhile a probe without a body is answered.
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("a request without a body during the attack: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a request without a body during the attack: HTTP %d", resp.StatusCode)
	}
	refused, timedOut := 0, 0
	for i, c := range clients {
		select {
		case <-c.closed:
		case <-time.After(60 * time.Second):
			t.Fatalf("connection %d is still open a minute later; it got %q", i, c.answer())
		}
		switch a := c.answer(); {
		case strings.HasPrefix(a, "HTTP/1.1 503"):
			refused++
		case strings.HasPrefix(a, "HTTP/1.1 408"):
			timedOut++
		default:
			t.Errorf("connection %d got %q", i, a)
		}
	}
	if refused == 0 || timedOut == 0 || timedOut > n-refused {
		t.Errorf("%d refused at once, %d timed out; want both", refused, timedOut)
	}
	t.Logf("%d connections: %d answered 503 at once, %d cut off with 408", n, refused, timedOut)
}

// Headers sent a byte at a time, and a kept-alive connection that sends nothing more, are closed
// by the server too.
func TestSlowHeadersAndIdleConnectionsAreClosed(t *testing.T) {
	l := httpserve.Limits{ReadHeaderTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond}
	addr := serve(t, ok, l)
	slow := dialSlow(t, addr)
	go slow.trickle("", "GET / HTTP/1.1\r\nHost: qm\r\nX-Pad: "+strings.Repeat("y", 500)+"\r\n\r\n", 100*time.Millisecond)
	idle := dialSlow(t, addr)
	idle.trickle("GET / HTTP/1.1\r\nHost: qm\r\n\r\n", "", 0)
	for name, c := range map[string]*slowClient{"slow headers": slow, "idle keep-alive": idle} {
		select {
		case <-c.closed:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: the connection is still open a minute later", name)
		}
	}
	if !strings.HasPrefix(idle.answer(), "HTTP/1.1 200") {
		t.Errorf("the idle connection's request was not answered first: %q", idle.answer())
	}
}

// A body larger than the limit is refused with 413 before the handler runs; one within it reaches
// the handler whole.
func TestRequestBodiesAreBounded(t *testing.T) {
	addr := serve(t, ok, httpserve.Limits{MaxBody: 1000})
	for _, c := range []struct {
		body string
		code int
	}{{strings.Repeat("z", 1000), 200}, {strings.Repeat("z", 1001), 413}} {
		resp, err := http.Post("http://"+addr+"/x", "text/plain", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%d bytes: HTTP %d, want %d", len(c.body), resp.StatusCode, c.code)
		}
		if c.code == 200 && string(b) != "got "+c.body {
			t.Errorf("the handler got %d bytes", len(b)-4)
		}
	}
	// Without a Content-Length (chunked) too.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST /x HTTP/1.1\r\nHost: qm\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n"+strings.Repeat("z", 2000)+"\r\n0\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a chunked body over the limit: HTTP %d", resp.StatusCode)
	}
}

// A request that AnswersTooLarge claims reaches the handler when its body is over the limit, with
// or without a Content-Length: its body reads nothing and fails as too large, and the client
// reads the handler's answer. Another request over the limit is refused with 413 as before.
func TestAHandlerAnswersTheBodiesTooLargeItClaims(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var tooBig *http.MaxBytesError
		if !errors.As(err, &tooBig) {
			_, _ = io.WriteString(w, "read "+strconv.Itoa(len(b))+" bytes")
			return
		}
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = io.WriteString(w, "mine: "+strconv.Itoa(len(b))+" bytes read, over "+strconv.FormatInt(tooBig.Limit, 10))
	})
	addr := serve(t, h, httpserve.Limits{MaxBody: 1000, AnswersTooLarge: func(r *http.Request) bool { return r.URL.Path == "/mine" }})
	for _, c := range []struct {
		path, body string
		chunked    bool
		code       int
		answer     string
	}{
		{"/mine", strings.Repeat("z", 1000), false, 200, "read 1000 bytes"},
		{"/mine", strings.Repeat("z", 1001), false, 413, "mine: 0 bytes read, over 1000"},
		{"/mine", strings.Repeat("z", 1<<20), false, 413, "mine: 0 bytes read, over 1000"},
		{"/mine", strings.Repeat("z", 1<<20), true, 413, "mine: 0 bytes read, over 1000"},
		{"/other", strings.Repeat("z", 1001), false, 413, "request body larger than 1000 bytes\n"},
	} {
		var body io.Reader = strings.NewReader(c.body)
		if c.chunked {
			body = io.MultiReader(body) // no Content-Length
		}
		resp, err := http.Post("http://"+addr+c.path, "text/plain", body)
		if err != nil {
			t.Fatalf("%s, %d bytes: %v", c.path, len(c.body), err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || string(b) != c.answer {
			t.Errorf("%s, %d bytes (chunked %v): HTTP %d %q, want %d %q", c.path, len(c.body), c.chunked, resp.StatusCode, b, c.code, c.answer)
		}
	}
}
