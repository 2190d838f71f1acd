package discordtest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Signer signs interactions as Discord does: Ed25519 over the timestamp followed by the body,
// with a key made for the test.
type Signer struct {
	Public  ed25519.PublicKey
	private ed25519.PrivateKey
}

// NewSigner makes a fresh key pair.
func NewSigner() *Signer {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return &Signer{Public: pub, private: priv}
}

// PublicKey is the public key in hex, as the Developer Portal shows it: DISCORD_PUBLIC_KEY.
func (s *Signer) PublicKey() string { return hex.EncodeToString(s.Public) }

// Signature is the X-Signature-Ed25519 header for body sent at ts.
func (s *Signer) Signature(ts string, body []byte) string {
	return hex.EncodeToString(ed25519.Sign(s.private, append([]byte(ts), body...)))
}

// Request is a POST of body to url, signed now.
func (s *Signer) Request(url string, body []byte) *http.Request {
	return s.RequestAt(url, body, time.Now())
}

// RequestAt is a POST of body to url, signed at the given time.
func (s *Signer) RequestAt(url string, body []byte, at time.Time) *http.Request {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	ts := strconv.FormatInt(at.Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature-Timestamp", ts)
	req.Header.Set("X-Signature-Ed25519", s.Signature(ts, body))
	return req
}

// App is the application id the builders put in interactions.
const App = "300000000000000001"

// tokenPrefix starts every interaction token the builders make, followed by the interaction id.
const tokenPrefix = "tok."

var lastID atomic.Int64

func init() { lastID.Store(700000000000000000) }

// Who is where an interaction comes from: a user, in a guild's channel or (Guild empty) a DM.
type Who struct {
	User    string
	Channel string
	Guild   string
}

func base(w Who, typ int) map[string]any {
	id := fmt.Sprint(lastID.Add(1))
	m := map[string]any{"id": id, "application_id": App, "type": typ, "token": tokenPrefix + id, "version": 1, "channel_id": w.Channel, "locale": "en-US"}
	user := map[string]any{"id": w.User, "username": "user" + w.User}
	if w.Guild != "" {
		m["guild_id"] = w.Guild
		m["member"] = map[string]any{"user": user, "roles": []any{}}
	} else {
		m["user"] = user
	}
	return m
}

// Opt is an option given to a command; Type 0 infers it from Value (string 3, whole number 4,
// bool 5).
type Opt struct {
	Name    string
	Value   any
	Type    int
	Focused bool
}

func options(opts []Opt) []any {
	out := []any{}
	for _, o := range opts {
		typ := o.Type
		if typ == 0 {
			switch o.Value.(type) {
			case int, int64, float64:
				typ = 4
			case bool:
				typ = 5
			default:
				typ = 3
			}
		}
		m := map[string]any{"name": o.Name, "type": typ, "value": o.Value}
		if o.Focused {
			m["focused"] = true
		}
		out = append(out, m)
	}
	return out
}

// ID is an interaction's id, read back from its body.
func ID(body []byte) string {
	var m struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &m)
	return m.ID
}

func encode(m map[string]any) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// Ping is a PING interaction.
func Ping() []byte { return encode(base(Who{}, 1)) }

// Command is /NAME SUB with options, from w.
func Command(w Who, name, sub string, opts ...Opt) []byte {
	m := base(w, 2)
	m["data"] = map[string]any{"id": "400000000000000001", "name": name, "type": 1,
		"options": []any{map[string]any{"name": sub, "type": 1, "options": options(opts)}}}
	return encode(m)
}

// Raw is an interaction of type typ with data as given, from w (for malformed payloads).
func Raw(w Who, typ int, data any) []byte {
	m := base(w, typ)
	m["data"] = data
	return encode(m)
}

// Autocomplete is an autocomplete interaction for /NAME SUB; one option should be Focused.
func Autocomplete(w Who, name, sub string, opts ...Opt) []byte {
	m := base(w, 4)
	m["data"] = map[string]any{"id": "400000000000000001", "name": name, "type": 1,
		"options": []any{map[string]any{"name": sub, "type": 1, "options": options(opts)}}}
	return encode(m)
}

// Click is a click by w on a button of a message.
func Click(w Who, msg Message, customID string) []byte {
	m := base(w, 3)
	m["message"] = map[string]any{"id": msg.ID, "channel_id": msg.ChannelID, "content": msg.Content, "type": 0}
	m["data"] = map[string]any{"custom_id": customID, "component_type": 2}
	return encode(m)
}

// Submit is w sending a form with one text input.
func Submit(w Who, customID, input, value string) []byte {
	m := base(w, 5)
	m["data"] = map[string]any{"custom_id": customID, "components": []any{map[string]any{"type": 1,
		"components": []any{map[string]any{"type": 4, "custom_id": input, "value": value}}}}}
	return encode(m)
}
