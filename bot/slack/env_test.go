package slack_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack/slackutilsx"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/chatstore"
	"github.com/acme/quartermaster/internal/store/storetest"
)

const secret = "8f742231b10e8888abcd99yyyzzz85a5"

// env is the whole product behind the Slack adapter: the example policy, the sim cluster, a real
// database, the lease service and the /gpu handler, served over HTTP to a fake Slack.
type env struct {
	t       *testing.T
	slack   *fakeSlack
	db      *store.DB
	svc     *qm.Service
	bot     *commands.Bot
	adapter *slackbot.Adapter
	srv     *httptest.Server
	trigger atomic.Int64
	handler atomic.Pointer[slackbot.Adapter]
	teams   []string // the request form's teams
	// unauthorized sends events without their authorizations (which name the app's bot user).
	unauthorized bool
}

type directory struct{ p *policy.Policy }

func (d directory) Groups(_ context.Context, user string) ([]string, bool) {
	id, ok := d.p.Identity(user)
	if !ok {
		return nil, false
	}
	return id.Groups, true
}

var start = time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC) // a Monday, 09:00 in Chicago

// newEnv wires everything on the database at dbURL (storetest.SQLite or storetest.Postgres).
func newEnv(t *testing.T, dbURL string) *env {
	t.Helper()
	p, err := policy.Load(docs.ExamplePolicy, docs.ExamplePolicyName)
	if err != nil {
		t.Fatal(err)
	}
	return newEnvOn(t, dbURL, p, nil)
}

// newEnvOn is newEnv on another policy, with the request form's teams (nil: vision and language).
func newEnvOn(t *testing.T, dbURL string, p *policy.Policy, teams []string) *env {
	t.Helper()
	e := &env{teams: teams, t: t, slack: newFakeSlack(t), db: storetest.Open(t, dbURL)}
	clock := sim.NewClock(start)
	cluster := sim.New(p, clock)
	e.svc = &qm.Service{Policy: p, Store: e.db, Clock: clock, Backend: cluster, Telemetry: cluster, Directory: directory{p}, Logger: storetest.Logger(t)}
	e.bot = &commands.Bot{Svc: e.svc, Logger: storetest.Logger(t)}
	e.adapter = e.newAdapter()
	e.svc.Notifier = &commands.Notices{Bot: e.bot, Sender: bot.SenderFunc(func(ctx context.Context, r bot.Reply) error {
		return e.current().Send(ctx, r)
	})}
	e.handler.Store(e.adapter)
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.current().Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		e.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.current().Close(ctx)
	})
	return e
}

func (e *env) current() *slackbot.Adapter { return e.handler.Load() }

// restart replaces the adapter with a new one, as a restarted service would have: it has
// forgotten every delivery it saw; what it posted is remembered in the database.
func (e *env) restart() {
	e.t.Helper()
	e.wait()
	old := e.adapter
	e.adapter = e.newAdapter()
	e.handler.Store(e.adapter)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := old.Close(ctx); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) newAdapter() *slackbot.Adapter {
	return e.newAdapterWith(e.bot, 0, 0)
}

// newAdapterWith is newAdapter with another handler, the inbox claim and how old a recovered
// command may be (0: the defaults).
func (e *env) newAdapterWith(h bot.Handler, claim, within time.Duration) *slackbot.Adapter {
	teams := e.teams
	if teams == nil {
		teams = []string{"vision", "language"}
	}
	var classes []slackbot.Choice
	for _, c := range e.svc.Policy.Classes {
		classes = append(classes, slackbot.Choice{Value: c.Name, Label: c.Name + " — " + c.Description})
	}
	a, err := slackbot.New(slackbot.Config{
		BotToken:        "xoxb-test",
		AppToken:        "xapp-test",
		SigningSecret:   secret,
		APIURL:          e.slack.apiURL(),
		Handler:         h,
		Refs:            chatstore.Refs{DB: e.db, Platform: slackbot.Platform},
		Inbox:           chatstore.Inbox{DB: e.db, Owner: "test", Platform: slackbot.Platform},
		InboxClaim:      claim,
		ReplayWithin:    within,
		Choices:         slackbot.Choices{Classes: classes, Teams: teams},
		FormClass:       e.bot.DefaultClass,
		Verbs:           verbs(),
		Logger:          storetest.Logger(e.t),
		ChannelInterval: time.Millisecond,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// useHTTPAdapter replaces the adapter with one on the HTTP endpoints alone, answering with h,
// set further by set (nil: nothing more), and returns it.
func (e *env) useHTTPAdapter(h bot.Handler, set func(*slackbot.Config)) *slackbot.Adapter {
	e.t.Helper()
	cfg := slackbot.Config{BotToken: "xoxb-test", SigningSecret: secret, APIURL: e.slack.apiURL(), Handler: h,
		Refs: chatstore.Refs{DB: e.db, Platform: slackbot.Platform}, Logger: storetest.Logger(e.t), ChannelInterval: time.Millisecond}
	if set != nil {
		set(&cfg)
	}
	a, err := slackbot.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.handler.Store(a)
	return a
}

// wait lets every delivery's work and every queued message finish.
func (e *env) wait() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.current().Wait(ctx); err != nil {
		e.t.Fatalf("work still in flight: %v", err)
	}
}

func sign(key string, ts int64, body string) string {
	m := hmac.New(sha256.New, []byte(key))
	fmt.Fprintf(m, "v0:%d:%s", ts, body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// send posts a body to path signed with key at time at; extra headers are added.
func (e *env) send(path, body, key string, at time.Time, extra map[string]string) int {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	ctype := "application/x-www-form-urlencoded"
	if strings.HasPrefix(body, "{") {
		ctype = "application/json"
	}
	req.Header.Set("Content-Type", ctype)
	ts := at.Unix()
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Slack-Signature", sign(key, ts, body))
	for k, v := range extra {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// signed posts a body signed correctly, now.
func (e *env) signed(path, body string, extra map[string]string) int {
	return e.send(path, body, secret, time.Now(), extra)
}

func (e *env) newTrigger() string {
	return fmt.Sprintf("T%d.%d", time.Now().UnixNano(), e.trigger.Add(1))
}

// commandBody is a slash command as Slack sends it when user typed "/gpu TEXT": Slack escapes
// the &, < and > people type (as &amp; &lt; &gt;), so a < in what it sends starts a mention or a
// link it made.
func (e *env) commandBody(user, text, trigger string) string {
	return e.sentBody(user, slackutilsx.EscapeMessage(text), trigger)
}

// sentBody is a slash command whose text is exactly sent: what Slack makes of what was typed,
// mentions and links (<@U…|name>, <mailto:…|…>) included.
func (e *env) sentBody(user, sent, trigger string) string {
	text := sent
	v := url.Values{
		"token": {"unused"}, "team_id": {"T1"}, "team_domain": {"acme"}, "channel_id": {"CGENERAL"}, "channel_name": {"general"},
		"user_id": {user}, "user_name": {strings.ToLower(user)}, "command": {"/gpu"}, "text": {text},
		"response_url": {e.slack.responseURL(trigger)}, "trigger_id": {trigger}, "api_app_id": {"A1"},
	}
	return v.Encode()
}

// command types "/gpu TEXT" as user and checks it was acknowledged; it returns the trigger id.
func (e *env) command(user, text string) string {
	e.t.Helper()
	trigger := e.newTrigger()
	if code := e.signed("/slack/commands", e.commandBody(user, text, trigger), nil); code != http.StatusOK {
		e.t.Fatalf("/gpu %s: HTTP %d", text, code)
	}
	return trigger
}

// interaction posts an interaction payload, signed, and returns the HTTP status and body.
func (e *env) interaction(payload map[string]any) (int, string) {
	e.t.Helper()
	b, _ := json.Marshal(payload)
	body := url.Values{"payload": {string(b)}}.Encode()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/slack/interactions", strings.NewReader(body))
	ts := time.Now().Unix()
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Slack-Signature", sign(secret, ts, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// clickPayload is a block_actions payload in which user presses button b of message m, under trigger.
func (e *env) clickPayload(user, trigger string, m message, b button) map[string]any {
	return map[string]any{
		"type": "block_actions", "trigger_id": trigger, "response_url": e.slack.responseURL(trigger),
		"user":      map[string]any{"id": user},
		"channel":   map[string]any{"id": m.Channel},
		"container": map[string]any{"type": "message", "channel_id": m.Channel, "message_ts": m.TS},
		"message":   map[string]any{"ts": m.TS},
		"actions":   []any{map[string]any{"type": "button", "action_id": b.ActionID, "value": b.Value, "block_id": "b", "action_ts": "1"}},
	}
}

// click presses a button of a message as user: a signed block_actions payload.
func (e *env) click(user string, m message, b button) {
	e.t.Helper()
	if code, _ := e.interaction(e.clickPayload(user, e.newTrigger(), m, b)); code != http.StatusOK {
		e.t.Fatalf("click %s: HTTP %d", b.Value, code)
	}
}

// lease reads a lease.
func (e *env) lease(id string) *qm.Lease {
	e.t.Helper()
	lid, err := qm.ParseLeaseID(id)
	if err != nil {
		e.t.Fatal(err)
	}
	l, err := e.svc.Get(context.Background(), lid)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// leases lists every lease.
func (e *env) leases() []*qm.Lease {
	e.t.Helper()
	ls, err := e.svc.List(context.Background(), qm.LeaseFilter{})
	if err != nil {
		e.t.Fatal(err)
	}
	return ls
}

// responseTo is the response_url answer to a delivery.
func (e *env) responseTo(trigger string) message {
	e.t.Helper()
	_, _, responses, _ := e.slack.snapshot()
	var found []message
	for _, r := range responses {
		if r.Channel == trigger {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		e.t.Fatalf("%d answers to %s, want 1: %+v", len(found), trigger, responses)
	}
	return found[0]
}

// postsTo are the messages posted to a channel id.
func (e *env) postsTo(channel string) []message {
	posts, _, _, _ := e.slack.snapshot()
	var out []message
	for _, p := range posts {
		if p.Channel == channel {
			out = append(out, p)
		}
	}
	return out
}

// verbs are the first words of the command table's commands, as serve gives them.
func verbs() []string {
	var v []string
	for _, s := range commands.Table() {
		v = append(v, s.Words[0])
	}
	return v
}
