// Package discordtest is a fake of Discord for tests: an httptest server that answers the REST
// calls Quartermaster makes (the bot user, DM channels, channel messages and their edits, interaction
// callbacks, deferred answers and follow-ups, command registration, the gateway's address) and records them,
// a gateway that delivers interactions over a WebSocket, and a signer that signs interactions with
// an Ed25519 key made for the test, as Discord signs them. Discord itself cannot run here; this
// fake answers as its API documentation says it does.
package discordtest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Token is the bot token the fake accepts on the calls that need one.
const Token = "fake-bot-token"

// BotUser is the id of the bot user the fake's Token stands for (GET /users/@me).
const BotUser = "300000000000000002"

// Message is a message as the fake received it: posted, edited, or given as an interaction's
// answer.
type Message struct {
	ID        string // the message's id ("@original" for a deferred answer's edit)
	ChannelID string // where it landed (D<user id> for a DM)
	Content   string
	Embeds    []Embed
	Buttons   []Button
	Ephemeral bool
	// Interaction is the interaction id an answer or a deferred answer belongs to.
	Interaction string
	// Type is the interaction response's type for an answer given over REST (4 a message,
	// 5 deferred, 8 suggestions, 9 a form).
	Type int
	// Choices are an autocomplete answer's suggestions.
	Choices []Choice
	// CustomID and Inputs describe a form (type 9).
	CustomID string
	Inputs   []string
	// Components is false when the request left the message's buttons as they were.
	Components bool
	// Rows is how many components each top-level row (action row) of the message holds.
	Rows []int
	// Files are the files attached to a post.
	Files []File
}

// Embed is an embed of a message.
type Embed struct {
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Fields      []Field `json:"fields"`
	Footer      *struct {
		Text string `json:"text"`
	} `json:"footer"`
}

// Field is an embed's field.
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Button is a button of a message.
type Button struct {
	Label    string
	Style    int
	CustomID string
}

// Choice is an autocomplete suggestion.
type Choice struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
}

// Text is all of a message's text, for looking things up.
func (m Message) Text() string {
	var b strings.Builder
	b.WriteString(m.Content)
	for _, e := range m.Embeds {
		b.WriteString("\n" + e.Title + "\n" + e.Description)
		for _, f := range e.Fields {
			b.WriteString("\n" + f.Name + ": " + f.Value)
		}
		if e.Footer != nil {
			b.WriteString("\n" + e.Footer.Text)
		}
	}
	return b.String()
}

// Button finds a button by its label.
func (m Message) Button(label string) (Button, bool) {
	for _, b := range m.Buttons {
		if b.Label == label {
			return b, true
		}
	}
	return Button{}, false
}

// Overwrite is a bulk overwrite of application commands: a PUT of the whole list.
type Overwrite struct {
	App, Guild string
	Commands   []map[string]any
}

// Fake is the fake Discord.
type Fake struct {
	// URL is the REST API's base: DISCORD_API_URL.
	URL string
	srv *httptest.Server
	gw  *gateway

	mu         sync.Mutex
	next       int64
	posts      []Message
	edits      []Message
	answers    []Message // interaction callbacks over REST and deferred answers' edits
	followUps  []Message // follow-up messages of interactions
	overwrites []Overwrite
	dms        map[string]string // user id -> DM channel id
	blocked    map[string]bool   // DM channel ids whose user takes no DMs from the app
	limited    map[string]int    // route -> how many more calls answer 429
	limitHTML  bool              // the 429s are a proxy's HTML page, not Discord's JSON
	refused    map[string]int    // DM channel id -> messages refused with 50007
	expired    map[string]bool   // interaction ids whose token no longer works
	twice      int               // answers refused because the interaction had its answer
	calls      int
	hook       func(r *http.Request)
}

// New starts a fake Discord; it stops when the test ends.
func New(t testing.TB) *Fake {
	f := &Fake{next: 900000000000000000, dms: map[string]string{}, blocked: map[string]bool{}, refused: map[string]int{}, limited: map[string]int{}, expired: map[string]bool{}}
	f.gw = newGateway(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/{v}/users/@me", f.auth(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"id": BotUser, "username": "Quartermaster", "discriminator": "0", "bot": true})
	}))
	mux.HandleFunc("POST /api/{v}/users/@me/channels", f.auth(f.createDM))
	mux.HandleFunc("POST /api/{v}/channels/{channel}/messages", f.auth(f.postMessage))
	mux.HandleFunc("PATCH /api/{v}/channels/{channel}/messages/{message}", f.auth(f.editMessage))
	mux.HandleFunc("POST /api/{v}/interactions/{id}/{token}/callback", f.callback)
	mux.HandleFunc("PATCH /api/{v}/webhooks/{app}/{token}/messages/{message}", f.webhookEdit)
	mux.HandleFunc("POST /api/{v}/webhooks/{app}/{token}", f.followUp)
	mux.HandleFunc("PUT /api/{v}/applications/{app}/commands", f.auth(f.overwrite))
	mux.HandleFunc("PUT /api/{v}/applications/{app}/guilds/{guild}/commands", f.auth(f.overwrite))
	mux.HandleFunc("GET /api/{v}/gateway", f.gateway)
	mux.HandleFunc("GET /api/{v}/gateway/bot", f.auth(f.gateway))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("fake Discord: unexpected %s %s", r.Method, r.URL.Path)
		writeError(w, http.StatusNotFound, 0, "404: Not Found")
	})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.calls++
		hook := f.hook
		f.mu.Unlock()
		if hook != nil {
			hook(r)
		}
		mux.ServeHTTP(w, r)
	}))
	f.URL = f.srv.URL
	t.Cleanup(func() {
		f.gw.close()
		f.srv.Close()
	})
	return f
}

// DMChannel is the id of the DM channel the fake gives a user.
func DMChannel(user string) string { return "D" + user }

// BlockDMs makes user one who turned off DMs from server members: their DM channel opens, and a
// message to it is refused as Discord refuses it (403, code 50007, "Cannot send messages to this
// user").
func (f *Fake) BlockDMs(user string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.blocked[DMChannel(user)] = true
}

// Expire makes the token of an interaction one that no longer works, as Discord's does 15 minutes
// after the interaction: its answer's edits and follow-ups are refused with 401, code 50027
// ("Invalid Webhook Token").
func (f *Fake) Expire(interaction string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expired[interaction] = true
}

// expiredNow answers 401 for an interaction whose token expired; call it with f.mu held.
func (f *Fake) expiredNow(w http.ResponseWriter, interaction string) bool {
	if !f.expired[interaction] {
		return false
	}
	writeError(w, http.StatusUnauthorized, 50027, "Invalid Webhook Token")
	return true
}

// Refused counts the messages to channel that were refused because its user takes no DMs.
func (f *Fake) Refused(channel string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused[channel]
}

// Limit makes the next n calls to route ("messages", "edits", "answers", "followups") answer HTTP 429 with a
// short retry_after, as Discord does when a rate limit is exceeded.
func (f *Fake) Limit(route string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limited[route] = n
}

// LimitWithPage is Limit with each 429 answered as a proxy in front of Discord answers it (an
// HTML page and a Retry-After header, as Cloudflare does), not with Discord's JSON.
func (f *Fake) LimitWithPage(route string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limited[route] = n
	f.limitHTML = true
}

// OnRequest calls h with every request the fake gets, before it answers it.
func (f *Fake) OnRequest(h func(r *http.Request)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hook = h
}

// Calls is how many requests the fake got.
func (f *Fake) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// Posts are the messages posted to channels (DMs included), in order.
func (f *Fake) Posts() []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Message(nil), f.posts...)
}

// PostsTo are the messages posted to one channel.
func (f *Fake) PostsTo(channel string) []Message {
	var out []Message
	for _, m := range f.Posts() {
		if m.ChannelID == channel {
			out = append(out, m)
		}
	}
	return out
}

// Edits are the edits of posted messages, in order.
func (f *Fake) Edits() []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Message(nil), f.edits...)
}

// Answers are interactions' answers given over REST (the gateway) and deferred answers' edits.
func (f *Fake) Answers() []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Message(nil), f.answers...)
}

// FollowUps are the follow-up messages sent for an interaction after its answer, in order.
func (f *Fake) FollowUps(interaction string) []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Message
	for _, m := range f.followUps {
		if m.Interaction == interaction {
			out = append(out, m)
		}
	}
	return out
}

// Overwrites are the bulk overwrites of application commands.
func (f *Fake) Overwrites() []Overwrite {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Overwrite(nil), f.overwrites...)
}

// WaitFor polls cond until it holds or a few seconds pass; false when it never held.
func (f *Fake) WaitFor(cond func() bool) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

func (f *Fake) id() string {
	f.next++
	return fmt.Sprint(f.next)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"message": msg, "code": code})
}

// auth refuses a call without the bot token, as Discord does.
func (f *Fake) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bot "+Token {
			writeError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
			return
		}
		h(w, r)
	}
}

// limitedNow answers 429 while route has some left; call it with f.mu held.
func (f *Fake) limitedNow(w http.ResponseWriter, route string) bool {
	if f.limited[route] <= 0 {
		return false
	}
	f.limited[route]--
	if f.limitHTML {
		w.Header().Set("Retry-After", "0")
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte("<html><body>Error 1015: You are being rate limited.</body></html>"))
		return true
	}
	w.Header().Set("Retry-After", "1")
	writeJSON(w, http.StatusTooManyRequests, map[string]any{"message": "You are being rate limited.", "retry_after": 0.02, "global": false})
	return true
}

func (f *Fake) createDM(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Recipient string `json:"recipient_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Recipient == "" {
		writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := DMChannel(body.Recipient)
	f.dms[body.Recipient] = ch
	writeJSON(w, http.StatusOK, map[string]any{"id": ch, "type": 1, "recipients": []any{map[string]any{"id": body.Recipient}}})
}

// rawMessage is a message body as Discord's API takes it.
type rawMessage struct {
	Content    *string            `json:"content"`
	Embeds     []Embed            `json:"embeds"`
	Components *[]json.RawMessage `json:"components"`
	Flags      int                `json:"flags"`
	CustomID   string             `json:"custom_id"`
	Choices    []Choice           `json:"choices"`
}

type rawComponent struct {
	Type       int               `json:"type"`
	Label      string            `json:"label"`
	Style      int               `json:"style"`
	CustomID   string            `json:"custom_id"`
	Components []json.RawMessage `json:"components"`
}

func (raw rawMessage) message() Message {
	m := Message{Embeds: raw.Embeds, Ephemeral: raw.Flags&64 != 0, CustomID: raw.CustomID, Choices: raw.Choices}
	if raw.Content != nil {
		m.Content = *raw.Content
	}
	if raw.Components != nil {
		m.Components = true
		for _, c := range *raw.Components {
			var rc rawComponent
			if json.Unmarshal(c, &rc) == nil {
				m.Rows = append(m.Rows, len(rc.Components))
			}
		}
		var walk func([]json.RawMessage)
		walk = func(cs []json.RawMessage) {
			for _, c := range cs {
				var rc rawComponent
				if json.Unmarshal(c, &rc) != nil {
					continue
				}
				switch rc.Type {
				case 2:
					m.Buttons = append(m.Buttons, Button{Label: rc.Label, Style: rc.Style, CustomID: rc.CustomID})
				case 4:
					m.Inputs = append(m.Inputs, rc.CustomID)
				}
				walk(rc.Components)
			}
		}
		walk(*raw.Components)
	}
	return m
}

// decodeMessage reads a message body: JSON, or multipart with payload_json and files[N] parts.
func decodeMessage(r *http.Request) (Message, error) {
	var files []File
	var b []byte
	if mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return Message{}, err
			}
			content, err := io.ReadAll(p)
			if err != nil {
				return Message{}, err
			}
			switch {
			case p.FormName() == "payload_json":
				b = content
			case strings.HasPrefix(p.FormName(), "files["):
				files = append(files, File{Name: p.FileName(), Type: p.Header.Get("Content-Type"), Content: content})
			}
		}
	} else {
		var err error
		if b, err = io.ReadAll(r.Body); err != nil {
			return Message{}, err
		}
	}
	var raw rawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return Message{}, err
	}
	m := raw.message()
	m.Files = files
	return m, nil
}

// OverLimits says which of Discord's limits on a message m breaks ("" when none), as Discord
// checks them before it takes a message (400, code 50035): at most 10 embeds; a title of 256
// characters, a description of 4096, 25 fields of 256 (name) and 1024 (value), a footer of
// 2048; 6000 characters in all the embeds' texts together; content of 2000 characters; 5 rows
// of 5 buttons, each labelled in at most 80 characters with a custom id of at most 100.
func OverLimits(m Message) string {
	n := func(s string) int { return len([]rune(s)) }
	if n(m.Content) > 2000 {
		return fmt.Sprintf("content: %d characters, at most 2000", n(m.Content))
	}
	if len(m.Embeds) > 10 {
		return fmt.Sprintf("embeds: %d, at most 10", len(m.Embeds))
	}
	if len(m.Rows) > 5 {
		return fmt.Sprintf("components: %d rows, at most 5", len(m.Rows))
	}
	for i, r := range m.Rows {
		if r > 5 {
			return fmt.Sprintf("components.%d: %d buttons, at most 5", i, r)
		}
	}
	for i, b := range m.Buttons {
		if n(b.Label) > 80 || len(b.CustomID) > 100 {
			return fmt.Sprintf("a button (%d): a label of %d characters and a custom id of %d, at most 80 and 100", i, n(b.Label), len(b.CustomID))
		}
	}
	total := 0
	for i, e := range m.Embeds {
		switch {
		case n(e.Title) > 256:
			return fmt.Sprintf("embeds.%d.title: %d characters, at most 256", i, n(e.Title))
		case n(e.Description) > 4096:
			return fmt.Sprintf("embeds.%d.description: %d characters, at most 4096", i, n(e.Description))
		case len(e.Fields) > 25:
			return fmt.Sprintf("embeds.%d.fields: %d, at most 25", i, len(e.Fields))
		}
		total += n(e.Title) + n(e.Description)
		for j, f := range e.Fields {
			if n(f.Name) > 256 || n(f.Value) > 1024 {
				return fmt.Sprintf("embeds.%d.fields.%d: %d and %d characters, at most 256 and 1024", i, j, n(f.Name), n(f.Value))
			}
			total += n(f.Name) + n(f.Value)
		}
		if e.Footer != nil {
			if n(e.Footer.Text) > 2048 {
				return fmt.Sprintf("embeds.%d.footer: %d characters, at most 2048", i, n(e.Footer.Text))
			}
			total += n(e.Footer.Text)
		}
	}
	if total > 6000 {
		return fmt.Sprintf("embeds: %d characters together, at most 6000", total)
	}
	return ""
}

// refuseOverLimits answers 400 for a message past Discord's limits, as Discord does.
func refuseOverLimits(w http.ResponseWriter, m Message) bool {
	if why := OverLimits(m); why != "" {
		writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body: "+why)
		return true
	}
	return false
}

// File is a file attached to a message.
type File struct {
	Name    string
	Type    string
	Content []byte
}

// messageJSON is a message as Discord's API returns it.
func messageJSON(m Message) map[string]any {
	return map[string]any{"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "type": 0, "author": map[string]any{"id": "1", "bot": true}}
}

func (f *Fake) postMessage(w http.ResponseWriter, r *http.Request) {
	m, err := decodeMessage(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	if refuseOverLimits(w, m) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.limitedNow(w, "messages") {
		return
	}
	if ch := r.PathValue("channel"); f.blocked[ch] {
		f.refused[ch]++
		writeError(w, http.StatusForbidden, 50007, "Cannot send messages to this user")
		return
	}
	m.ID, m.ChannelID = f.id(), r.PathValue("channel")
	f.posts = append(f.posts, m)
	writeJSON(w, http.StatusOK, messageJSON(m))
}

func (f *Fake) editMessage(w http.ResponseWriter, r *http.Request) {
	m, err := decodeMessage(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	if refuseOverLimits(w, m) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.limitedNow(w, "edits") {
		return
	}
	m.ID, m.ChannelID = r.PathValue("message"), r.PathValue("channel")
	found := false
	for _, p := range f.posts {
		if p.ID == m.ID && p.ChannelID == m.ChannelID {
			found = true
		}
	}
	if !found {
		writeError(w, http.StatusNotFound, 10008, "Unknown Message")
		return
	}
	f.edits = append(f.edits, m)
	writeJSON(w, http.StatusOK, messageJSON(m))
}

// Response reads an interaction's answer, as the HTTP endpoint gives it or the gateway's client
// sends it back over REST.
func Response(b []byte) (Message, error) {
	var body struct {
		Type int        `json:"type"`
		Data rawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return Message{}, err
	}
	if body.Type == 0 {
		return Message{}, fmt.Errorf("an interaction response without a type: %s", b)
	}
	m := body.Data.message()
	m.Type, m.ID = body.Type, "@original"
	return m, nil
}

func (f *Fake) callback(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	m, err := Response(b)
	if err != nil {
		writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.limitedNow(w, "answers") {
		return
	}
	m.Interaction = r.PathValue("id")
	for _, a := range f.answers {
		if a.Interaction == m.Interaction {
			// Discord takes one answer per interaction (the deferral counts as one).
			f.twice++
			writeError(w, http.StatusBadRequest, 40060, "Interaction has already been acknowledged.")
			return
		}
	}
	f.answers = append(f.answers, m)
	w.WriteHeader(http.StatusNoContent)
}

// AnsweredTwice is how many answers the fake refused, as Discord does (HTTP 400, code 40060),
// because their interaction had been answered already.
func (f *Fake) AnsweredTwice() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.twice
}

// AnswerTo is the last answer given over REST to an interaction (its deferred answer's edit, or
// its answer over the gateway).
func (f *Fake) AnswerTo(interaction string) (Message, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.answers) - 1; i >= 0; i-- {
		if f.answers[i].Interaction == interaction {
			return f.answers[i], true
		}
	}
	return Message{}, false
}

func (f *Fake) webhookEdit(w http.ResponseWriter, r *http.Request) {
	m, err := decodeMessage(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	if refuseOverLimits(w, m) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.limitedNow(w, "answers") {
		return
	}
	m.ID, m.Interaction = r.PathValue("message"), strings.TrimPrefix(r.PathValue("token"), tokenPrefix)
	if f.expiredNow(w, m.Interaction) {
		return
	}
	f.answers = append(f.answers, m)
	writeJSON(w, http.StatusOK, messageJSON(m))
}

// followUp creates a follow-up message of an interaction (Discord's Create Followup Message,
// POST /webhooks/APP/TOKEN): the interaction's token names it.
func (f *Fake) followUp(w http.ResponseWriter, r *http.Request) {
	m, err := decodeMessage(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	if refuseOverLimits(w, m) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.limitedNow(w, "followups") {
		return
	}
	m.ID, m.Interaction = f.id(), strings.TrimPrefix(r.PathValue("token"), tokenPrefix)
	if f.expiredNow(w, m.Interaction) {
		return
	}
	f.followUps = append(f.followUps, m)
	if r.URL.Query().Get("wait") != "true" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusOK, messageJSON(m))
}

func (f *Fake) overwrite(w http.ResponseWriter, r *http.Request) {
	var cmds []map[string]any
	if err := json.NewDecoder(r.Body).Decode(&cmds); err != nil {
		writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return
	}
	for i, c := range cmds {
		// Discord's optional fields (options?, choices?, channel_types?) are left out when
		// absent; a null where it expects an array or a value is an invalid form body.
		if at := nullAt(c, fmt.Sprint(i)); at != "" {
			writeError(w, http.StatusBadRequest, 50035, "Invalid Form Body: "+at+" is null")
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.overwrites = append(f.overwrites, Overwrite{App: r.PathValue("app"), Guild: r.PathValue("guild"), Commands: cmds})
	out := make([]map[string]any, len(cmds))
	for i, c := range cmds {
		d := map[string]any{"id": f.id(), "application_id": r.PathValue("app"), "version": "1"}
		for k, v := range c {
			d[k] = v
		}
		out[i] = d
	}
	writeJSON(w, http.StatusOK, out)
}

// nullAt is the path of the first null in v (0.options.2.channel_types), or "" if none.
func nullAt(v any, at string) string {
	switch v := v.(type) {
	case nil:
		return at
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p := nullAt(v[k], at+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range v {
			if p := nullAt(e, fmt.Sprintf("%s.%d", at, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

func (f *Fake) gateway(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"url": f.gw.url(), "shards": 1})
}
