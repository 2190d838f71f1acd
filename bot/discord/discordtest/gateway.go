package discordtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"
)

// gateway is a fake of Discord's gateway: it says hello, takes the identify, says it is ready,
// acknowledges heartbeats, and sends the interactions a test delivers as INTERACTION_CREATE
// dispatches.
type gateway struct {
	t   testing.TB
	srv *httptest.Server

	mu     sync.Mutex
	conns  []*gwConn
	ready  chan struct{} // closed when a client has identified
	closed bool
	seq    int
}

type gwConn struct {
	mu sync.Mutex
	c  *websocket.Conn
}

func (g *gwConn) send(v any) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.c.WriteJSON(v)
}

func newGateway(t testing.TB) *gateway {
	g := &gateway{t: t, ready: make(chan struct{})}
	up := websocket.Upgrader{}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		g.serve(&gwConn{c: c})
	}))
	return g
}

func (g *gateway) url() string { return "ws" + strings.TrimPrefix(g.srv.URL, "http") }

func (g *gateway) serve(c *gwConn) {
	defer c.c.Close()
	if c.send(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": 45000}}) != nil {
		return
	}
	for {
		var msg struct {
			Op int `json:"op"`
		}
		_, b, err := c.c.ReadMessage()
		if err != nil {
			return
		}
		if json.Unmarshal(b, &msg) != nil {
			continue
		}
		switch msg.Op {
		case 1: // heartbeat
			_ = c.send(map[string]any{"op": 11})
		case 2: // identify
			g.mu.Lock()
			g.seq++
			seq := g.seq
			g.conns = append(g.conns, c)
			g.mu.Unlock()
			_ = c.send(map[string]any{"op": 0, "t": "READY", "s": seq, "d": map[string]any{
				"v": 9, "session_id": "fake-session", "user": map[string]any{"id": "1", "username": "quartermaster", "bot": true}, "guilds": []any{}}})
			g.mu.Lock()
			select {
			case <-g.ready:
			default:
				close(g.ready)
			}
			g.mu.Unlock()
		}
	}
}

// deliver sends an interaction to every connected client.
func (g *gateway) deliver(interaction []byte) int {
	<-g.ready
	g.mu.Lock()
	g.seq++
	seq := g.seq
	conns := append([]*gwConn(nil), g.conns...)
	g.mu.Unlock()
	n := 0
	for _, c := range conns {
		if c.send(map[string]any{"op": 0, "t": "INTERACTION_CREATE", "s": seq, "d": json.RawMessage(interaction)}) == nil {
			n++
		}
	}
	return n
}

func (g *gateway) close() {
	g.mu.Lock()
	conns := g.conns
	g.closed = true
	g.mu.Unlock()
	for _, c := range conns {
		c.mu.Lock()
		_ = c.c.Close()
		c.mu.Unlock()
	}
	g.srv.Close()
}

// Deliver sends an interaction over the gateway to every client that has identified (waiting for
// one to); it returns how many it reached.
func (f *Fake) Deliver(interaction []byte) int { return f.gw.deliver(interaction) }
