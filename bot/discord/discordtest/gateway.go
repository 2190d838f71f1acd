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

	mu      sync.Mutex
	conns   []*gwConn
	ready   chan struct{} // closed when a client has identified
	closed  bool
	seq     int
	intents []int // the intents each identify asked for, in order
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
			D  struct {
				Intents int `json:"intents"`
			} `json:"d"`
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
			g.intents = append(g.intents, msg.D.Intents)
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
	return g.dispatch("INTERACTION_CREATE", interaction)
}

// dispatch sends the event name with its data to every connected client.
func (g *gateway) dispatch(name string, data []byte) int {
	<-g.ready
	g.mu.Lock()
	g.seq++
	seq := g.seq
	conns := append([]*gwConn(nil), g.conns...)
	g.mu.Unlock()
	n := 0
	for _, c := range conns {
		if c.send(map[string]any{"op": 0, "t": name, "s": seq, "d": json.RawMessage(data)}) == nil {
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

// Intents are the gateway intents the last client to identify asked for; 0 before one has.
func (f *Fake) Intents() int {
	f.gw.mu.Lock()
	defer f.gw.mu.Unlock()
	if len(f.gw.intents) == 0 {
		return 0
	}
	return f.gw.intents[len(f.gw.intents)-1]
}

// DM is a message sent to the app in a direct message (or, with Guild set, in a server's
// channel), as the gateway delivers it.
type DM struct {
	ID      string // the message's id; empty: a new one
	User    string // its author's Discord user id
	Bot     bool   // its author is a bot (the app itself included)
	Content string
	Guild   string // the server it was sent in; empty for a DM
	Channel string // where it was sent; empty: the author's DM channel with the app
}

// DeliverMessage sends a message over the gateway as MESSAGE_CREATE to every client that has
// identified (waiting for one to); it returns how many it reached. The message is in the
// author's DM channel with the app (DMChannel) unless it says otherwise.
func (f *Fake) DeliverMessage(m DM) int {
	if m.ID == "" {
		f.mu.Lock()
		m.ID = f.id()
		f.mu.Unlock()
	}
	if m.Channel == "" {
		m.Channel = DMChannel(m.User)
	}
	d := map[string]any{"id": m.ID, "channel_id": m.Channel, "type": 0, "content": m.Content,
		"timestamp": "2026-12-07T09:00:00.000000+00:00",
		"author":    map[string]any{"id": m.User, "username": "user" + m.User, "bot": m.Bot}}
	if m.Guild != "" {
		d["guild_id"] = m.Guild
	}
	b, _ := json.Marshal(d)
	return f.gw.dispatch("MESSAGE_CREATE", b)
}

// Clients is how many clients have identified on the gateway.
func (f *Fake) Clients() int {
	f.gw.mu.Lock()
	defer f.gw.mu.Unlock()
	return len(f.gw.conns)
}
