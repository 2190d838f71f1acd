package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// platforms stands in for Slack's Web API, Slack's response URLs and Discord's REST API and
// gateway on one loopback server: it tells the service who its users are, takes the notices it
// posts, and records when each delivery got its answer. The gateway, which serve opens for the
// DMs people send the app, only lets it connect and stay connected: the load sends no DMs, and
// its interactions go to the HTTP endpoint.
type platforms struct {
	plan plan
	srv  *http.Server
	url  string

	mu       sync.Mutex
	answered []time.Time // by delivery; zero until its first answer
	count    atomic.Int64
	last     atomic.Int64 // unix nanoseconds of the latest first answer
	notices  atomic.Int64

	gwMu    sync.Mutex
	gwConns []*websocket.Conn
}

func startPlatforms(p plan) (*platforms, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &platforms{plan: p, url: "http://" + ln.Addr().String(), answered: make([]time.Time, p.total)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /response/{i}", f.response)
	mux.HandleFunc("PATCH /api/{v}/webhooks/{app}/{token}/messages/{message}", f.discordEdit)
	mux.HandleFunc("POST /api/{v}/interactions/{id}/{token}/callback", f.discordCallback)
	mux.HandleFunc("POST /api/{v}/users/@me/channels", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Recipient string `json:"recipient_id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		writeJSON(w, map[string]any{"id": "9" + in.Recipient, "type": 1})
	})
	mux.HandleFunc("GET /api/{v}/gateway", f.discordGatewayURL)
	mux.HandleFunc("GET /api/{v}/gateway/bot", f.discordGatewayURL)
	mux.HandleFunc("GET "+gatewayPath+"/", f.discordGateway) // discordgo adds /?v=…
	mux.HandleFunc("POST /api/{v}/channels/{channel}/messages", f.discordMessage)
	mux.HandleFunc("PATCH /api/{v}/channels/{channel}/messages/{message}", f.discordMessage)
	mux.HandleFunc("/", f.slackAPI)
	f.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.srv.Serve(ln) }()
	return f, nil
}

func (f *platforms) close() {
	_ = f.srv.Close()
	f.gwMu.Lock()
	defer f.gwMu.Unlock()
	for _, c := range f.gwConns {
		_ = c.Close()
	}
}

// gatewayPath is where the fake's gateway takes WebSocket connections.
const gatewayPath = "/discord-gateway"

// discordGatewayURL is Get Gateway (Bot): where the gateway is.
func (f *platforms) discordGatewayURL(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{"url": "ws" + strings.TrimPrefix(f.url, "http") + gatewayPath, "shards": 1,
		"session_start_limit": map[string]any{"total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1}})
}

// discordGateway is a gateway session that delivers nothing: it says hello, answers the
// identify with READY and acknowledges heartbeats, until the client goes.
func (f *platforms) discordGateway(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	f.gwMu.Lock()
	f.gwConns = append(f.gwConns, c)
	f.gwMu.Unlock()
	if c.WriteJSON(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": 41250}}) != nil {
		return
	}
	seq := 0
	for {
		var msg struct {
			Op int `json:"op"`
		}
		if err := c.ReadJSON(&msg); err != nil {
			return
		}
		switch msg.Op {
		case 1: // heartbeat
			err = c.WriteJSON(map[string]any{"op": 11})
		case 2: // identify
			seq++
			err = c.WriteJSON(map[string]any{"op": 0, "t": "READY", "s": seq, "d": map[string]any{
				"v": 10, "session_id": "load", "user": map[string]any{"id": discordAppID, "username": "quartermaster", "bot": true}, "guilds": []any{}}})
		}
		if err != nil {
			return
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// answer records delivery i's first answer.
func (f *platforms) answer(i int) {
	if i < 0 || i >= len(f.answered) {
		return
	}
	now := time.Now()
	f.mu.Lock()
	first := f.answered[i].IsZero()
	if first {
		f.answered[i] = now
	}
	f.mu.Unlock()
	if first {
		f.count.Add(1)
		f.last.Store(now.UnixNano())
	}
}

// response is a Slack response_url: /response/INDEX.
func (f *platforms) response(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if i, err := strconv.Atoi(r.PathValue("i")); err == nil {
		f.answer(i)
	}
	writeJSON(w, map[string]any{"ok": true})
}

// discordEdit is the edit of a deferred answer; the token the load gave the interaction is
// load.INDEX.
func (f *platforms) discordEdit(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	f.discordAnswer(r.PathValue("token"))
	writeJSON(w, map[string]any{"id": r.PathValue("message"), "channel_id": discordChanID, "content": "", "type": 0})
}

func (f *platforms) discordCallback(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	f.discordAnswer(r.PathValue("token"))
	w.WriteHeader(http.StatusNoContent)
}

func (f *platforms) discordAnswer(token string) {
	if i, err := strconv.Atoi(strings.TrimPrefix(token, "load.")); err == nil {
		f.answer(i)
	}
}

var discordMessages atomic.Int64

func (f *platforms) discordMessage(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	f.notices.Add(1)
	id := r.PathValue("message")
	if id == "" {
		id = fmt.Sprint(900000000000000000 + discordMessages.Add(1))
	}
	writeJSON(w, map[string]any{"id": id, "channel_id": r.PathValue("channel"), "content": "", "type": 0})
}

// slackAPI answers the Web API methods the service calls: users.info from the plan's directory,
// and every post, update, DM and Home tab with ok.
func (f *platforms) slackAPI(w http.ResponseWriter, r *http.Request) {
	method := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	var js struct {
		Channel string `json:"channel"`
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		_ = json.NewDecoder(r.Body).Decode(&js)
	} else {
		_ = r.ParseForm()
		js.Channel = r.Form.Get("channel")
	}
	if js.Channel == "" {
		js.Channel = loadChannel
	}
	switch method {
	case "users.info":
		id := r.Form.Get("user")
		email := ""
		if u, ok := f.userBySlackID(id); ok {
			email = f.plan.email(u)
		}
		writeJSON(w, map[string]any{"ok": true, "user": map[string]any{"id": id, "profile": map[string]any{"email": email}}})
	case "conversations.open":
		writeJSON(w, map[string]any{"ok": true, "channel": map[string]any{"id": "D" + r.Form.Get("users")}})
	case "chat.postMessage", "chat.update", "chat.postEphemeral":
		f.notices.Add(1)
		writeJSON(w, map[string]any{"ok": true, "channel": js.Channel, "ts": fmt.Sprintf("%d.000100", time.Now().UnixNano())})
	default:
		writeJSON(w, map[string]any{"ok": true})
	}
}

func (f *platforms) userBySlackID(id string) (int, bool) {
	prefix := "U" + strings.ToUpper(f.plan.run)
	if !strings.HasPrefix(id, prefix) {
		return 0, false
	}
	u, err := strconv.Atoi(id[len(prefix):])
	return u, err == nil && u >= 0 && u < f.plan.users
}

// answers returns when each delivery was first answered (zero: not yet).
func (f *platforms) answers() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.answered...)
}
