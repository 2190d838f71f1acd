package storetest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Proxy forwards loopback connections to the test PostgreSQL until it is frozen; frozen, it holds
// every byte in both directions, as a database that stops answering looks to its clients.
type Proxy struct {
	// Target is the server's host:port as the test DSN names it; Addr is the proxy's.
	Target, Addr string

	mu     sync.Mutex
	frozen bool
}

// NewProxy starts a proxy to the test PostgreSQL (PostgresDSN) that runs until the test ends.
func NewProxy(t testing.TB) *Proxy {
	t.Helper()
	target := strings.TrimPrefix(PostgresDSN(), "postgres://")
	target = target[strings.Index(target, "@")+1:]
	target = target[:strings.IndexAny(target, "/?")]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &Proxy{Target: target, Addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go p.copy(s, c)
			go p.copy(c, s)
		}
	}()
	return p
}

// Via is url (a database URL of the test server) routed through the proxy.
func (p *Proxy) Via(url string) string { return strings.Replace(url, p.Target, p.Addr, 1) }

// Freeze stops (on) or resumes forwarding.
func (p *Proxy) Freeze(on bool) {
	p.mu.Lock()
	p.frozen = on
	p.mu.Unlock()
}

func (p *Proxy) copy(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		for {
			p.mu.Lock()
			fr := p.frozen
			p.mu.Unlock()
			if !fr {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// Mute starts a TCP server on loopback that accepts connections and never answers, as a database
// that hangs from the start looks to its clients, and returns its host:port. It runs until the
// test ends.
func Mute(t testing.TB) string {
	t.Helper()
	return Serve(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
}

// Serve hands each TCP connection to a loopback port to handle until the test ends, and returns
// the port's host:port.
func Serve(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr().String()
}
