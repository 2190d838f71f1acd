package store

import (
	"context"
	"database/sql"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lib/pq"
)

// PostgreSQL defaults that keep a database that stops answering from stopping the service.
const (
	// DefaultConnectTimeout bounds connecting (TCP, TLS and the startup exchange), unless the URL
	// sets connect_timeout.
	DefaultConnectTimeout = 5 * time.Second
	// DefaultStatementTimeout is the server's limit on one statement, unless the URL sets
	// statement_timeout.
	DefaultStatementTimeout = 10 * time.Second
	// answerGrace is how much longer than the statement timeout the client waits for the
	// server's answer after sending it something: a server that accepts and never answers (hung,
	// or behind a dead link) fails the statement instead of holding its caller for good, while a
	// slow statement fails on the server first, with its own error.
	answerGrace = 5 * time.Second
)

// withTimeouts adds connect_timeout and statement_timeout to a PostgreSQL URL that does not set
// them.
func withTimeouts(url string) string {
	add := func(u, k, v string) string {
		if strings.Contains(u, k+"=") {
			return u
		}
		if strings.Contains(u, "?") {
			return u + "&" + k + "=" + v
		}
		return u + "?" + k + "=" + v
	}
	url = add(url, "connect_timeout", strconv.Itoa(int(DefaultConnectTimeout/time.Second)))
	return add(url, "statement_timeout", strconv.FormatInt(int64(DefaultStatementTimeout/time.Millisecond), 10))
}

// openPostgres opens a pool whose connections give up on a server that does not answer within
// the statement timeout and answerGrace.
// Each time a connection sends the server something it adds one to sent: a round trip, since
// lib/pq writes a whole query (or a transaction's BEGIN or COMMIT) at once and waits for its answer.
func openPostgres(dsn string, sent *atomic.Int64) (*sql.DB, error) {
	c, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	wait := DefaultStatementTimeout
	if i := strings.Index(dsn, "statement_timeout="); i >= 0 {
		v := dsn[i+len("statement_timeout="):]
		if j := strings.IndexAny(v, "& "); j >= 0 {
			v = v[:j]
		}
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
			wait = time.Duration(ms) * time.Millisecond
		}
	}
	c.Dialer(answeringDialer{wait: wait + answerGrace, sent: sent})
	return sql.OpenDB(c), nil
}

// answeringDialer dials TCP with keepalives and wraps each connection so that every wait for the
// server's answer has a deadline.
type answeringDialer struct {
	wait time.Duration
	sent *atomic.Int64
}

func (d answeringDialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

func (d answeringDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, address)
}

func (d answeringDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	nd := net.Dialer{KeepAlive: 15 * time.Second}
	c, err := nd.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &answeringConn{Conn: c, wait: d.wait, sent: d.sent}, nil
}

// answeringConn sets a read deadline each time the client sends: the answer must come within
// the connection's wait. While lib/pq holds a deadline of its own (connecting), that one stands.
type answeringConn struct {
	net.Conn
	wait  time.Duration
	sent  *atomic.Int64
	mu    sync.Mutex
	fixed bool
}

func (c *answeringConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.fixed = !t.IsZero()
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *answeringConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	fixed := c.fixed
	c.mu.Unlock()
	if !fixed {
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.wait))
	}
	if c.sent != nil {
		c.sent.Add(1)
	}
	return c.Conn.Write(b)
}
