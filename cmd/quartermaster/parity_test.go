package main

import (
	"bytes"
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
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot/console"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/chatstore"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// step is one line of a scenario (testdata/scenarios/*.txt says how they are written).
type step struct {
	user    string
	spec    *commands.Spec
	values  map[string]string
	label   string // a click
	where   string // "#channel" for a click there
	control string // ":advance 35m"
}

// expectation is a scenario's "expect" line: a row of the database at the end holds text (or,
// with no, none does).
type expectation struct {
	text string
	no   bool
}

func parseScenario(t *testing.T, text string) ([]step, []expectation) {
	t.Helper()
	var out []step
	var expect []expectation
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "expect no "):
			expect = append(expect, expectation{text: strings.TrimPrefix(line, "expect no "), no: true})
			continue
		case strings.HasPrefix(line, "expect "):
			expect = append(expect, expectation{text: strings.TrimPrefix(line, "expect ")})
			continue
		case strings.HasPrefix(line, ":"):
			out = append(out, step{control: line})
			continue
		}
		user, rest, ok := strings.Cut(line, ": ")
		if !ok {
			t.Fatalf("scenario line %q", line)
		}
		if label, ok := strings.CutPrefix(rest, "click "); ok {
			s := step{user: user, label: label}
			if l, where, ok := strings.Cut(label, " in #"); ok {
				s.label, s.where = l, "#"+where
			}
			out = append(out, s)
			continue
		}
		f := strings.Fields(rest)
		spec, ok := commands.Lookup(f[0])
		if !ok {
			t.Fatalf("scenario: no command %q", f[0])
		}
		s := step{user: user, spec: spec, values: map[string]string{}}
		last := ""
		for _, w := range f[1:] {
			if k, v, ok := strings.Cut(w, "="); ok && hasParam(spec, k) {
				s.values[k], last = v, k
				continue
			}
			if last == "" {
				t.Fatalf("scenario: %q in %q", w, line)
			}
			s.values[last] += " " + w
		}
		out = append(out, s)
	}
	return out, expect
}

func hasParam(s *commands.Spec, name string) bool {
	for _, p := range s.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

// driver tells a scenario to the product through one adapter.
type driver interface {
	app() *App
	command(s step)
	click(t *testing.T, s step)
	// settle lets everything the last step set off finish.
	settle()
}

// parityApp is the embedded default on a SQLite file, its clock simulated from the scenario's start.
func parityApp(t *testing.T) *App {
	t.Helper()
	start, _ := time.Parse(time.RFC3339, scenario)
	a, err := NewApp(context.Background(), appOptions{flags: commonFlags{db: "sqlite:" + filepath.Join(t.TempDir(), "qm.db")}, simClock: true, start: start, logger: storetest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// TestOneScenarioThreeAdapters: each scenario of testdata/scenarios, told through the console,
// Slack and Discord, ends in the same database: the same leases in the same states, decided by the
// same people, with the same history; and in the one its expect lines describe.
func TestOneScenarioThreeAdapters(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			steps, expect := parseScenario(t, string(text))
			checkParity(t, steps, expect)
		})
	}
}

func checkParity(t *testing.T, steps []step, expect []expectation) {
	drivers := map[string]func(t *testing.T) driver{
		"console": newConsoleDriver,
		"slack":   newSlackDriver,
		"discord": newDiscordDriver,
	}
	states := map[string][]string{}
	for _, name := range []string{"console", "slack", "discord"} {
		t.Run(name, func(t *testing.T) {
			d := drivers[name](t)
			ctx := context.Background()
			for _, s := range steps {
				switch {
				case strings.HasPrefix(s.control, ":advance "):
					dur, err := policy.ParseDuration(strings.TrimPrefix(s.control, ":advance "))
					if err != nil {
						t.Fatal(err)
					}
					if err := d.app().Advance(ctx, dur); err != nil {
						t.Fatal(err)
					}
				case strings.HasPrefix(s.control, ":util "):
					f := strings.Fields(s.control)
					pct, _ := strconv.ParseFloat(f[2], 64)
					if err := d.app().SetUtilization(ctx, f[1], pct); err != nil {
						t.Fatal(err)
					}
				case s.control != "":
					t.Fatalf("scenario control %q", s.control)
				case s.label != "":
					d.click(t, s)
				default:
					d.command(s)
				}
				d.settle()
			}
			states[name] = dbState(t, d.app())
		})
	}
	want := states["console"]
	if len(want) == 0 {
		t.Fatal("the console run left nothing to compare")
	}
	joined := strings.Join(want, "\n")
	for _, e := range expect {
		if strings.Contains(joined, e.text) == e.no {
			t.Errorf("expect %v %q fails on:\n%s", map[bool]string{true: "no", false: ""}[e.no], e.text, joined)
		}
	}
	for _, name := range []string{"slack", "discord"} {
		got := states[name]
		if strings.Join(got, "\n") == joined {
			continue
		}
		for i := 0; i < max(len(got), len(want)); i++ {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Errorf("%s differs from the console at row %d:\n %s: %s\n console: %s", name, i, name, g, w)
				break
			}
		}
	}
}

// dbState is every lease and its history, with what differs by adapter alone (the delivery key a
// request was de-duplicated by) left out.
func dbState(t *testing.T, a *App) []string {
	t.Helper()
	ctx := context.Background()
	ls, err := a.Service.List(ctx, qm.LeaseFilter{Kind: qm.AnyKind})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].ID < ls[j].ID })
	var out []string
	for _, l := range ls {
		c := *l
		c.RequestKey = ""
		out = append(out, fmt.Sprintf("%+v", c))
		ev, err := a.Service.History(ctx, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ev {
			e.ID = 0
			out = append(out, fmt.Sprintf("  %+v", e))
		}
	}
	return out
}

// clickable is a message someone was sent, with its buttons' labels and what clicking them sends.
type clickable struct {
	to      string // a person or a #channel
	buttons map[string]string
	raw     any // the platform's own message, for the click
}

// newest finds the newest message to "to" with a button labelled label.
func newest(t *testing.T, msgs []clickable, to, label string) clickable {
	t.Helper()
	for i := len(msgs) - 1; i >= 0; i-- {
		if strings.EqualFold(msgs[i].to, to) {
			if _, ok := msgs[i].buttons[label]; ok {
				return msgs[i]
			}
		}
	}
	t.Fatalf("no message to %s with a button %q", to, label)
	return clickable{}
}

// --- the console ---

type consoleDriver struct {
	a   *App
	c   *console.Console
	out *bytes.Buffer
	t   *testing.T
}

func newConsoleDriver(t *testing.T) driver {
	a := parityApp(t)
	d := &consoleDriver{a: a, out: &bytes.Buffer{}, t: t}
	d.c = &console.Console{Handler: a.Bot, Out: d.out, JSON: true}
	a.Sender = d.c
	return d
}

func (d *consoleDriver) app() *App { return d.a }
func (d *consoleDriver) settle()   {}

func (d *consoleDriver) command(s step) {
	d.c.Line(context.Background(), s.user+": "+s.spec.Text(s.values))
}

func (d *consoleDriver) click(t *testing.T, s step) {
	var msgs []clickable
	for _, line := range strings.Split(strings.TrimSpace(d.out.String()), "\n") {
		var m message
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		c := clickable{to: m.To, buttons: map[string]string{}}
		for _, a := range m.Actions {
			c.buttons[a.Label] = a.Command
		}
		msgs = append(msgs, c)
	}
	to := s.user
	if s.where != "" {
		to = s.where
	}
	m := newest(t, msgs, to, s.label)
	d.c.Line(context.Background(), s.user+": "+m.buttons[s.label])
}

// --- Slack, against a loopback fake of its Web API ---

const paritySlackSecret = "parity-secret"

type slackDriver struct {
	a       *App
	adapter *slackbot.Adapter
	srv     *httptest.Server // the adapter's endpoints
	api     *httptest.Server // the fake Web API
	mu      sync.Mutex
	msgs    []clickable
	n       int
}

// slackID is the Slack user id the fake gives a person.
func slackID(email string) string {
	local, _, _ := strings.Cut(email, "@")
	return "U" + strings.ToUpper(local)
}

func newSlackDriver(t *testing.T) driver {
	d := &slackDriver{a: parityApp(t)}
	people := map[string]string{}
	for _, id := range d.a.Policy.Directory {
		people[slackID(id.User)] = id.User
	}
	record := func(to string, blocks string) {
		var bs []struct {
			Elements []struct {
				Type     string                `json:"type"`
				Text     struct{ Text string } `json:"text"`
				Value    string                `json:"value"`
				ActionID string                `json:"action_id"`
			} `json:"elements"`
		}
		_ = json.Unmarshal([]byte(blocks), &bs)
		c := clickable{to: to, buttons: map[string]string{}}
		for _, b := range bs {
			for _, e := range b.Elements {
				if e.Type == "button" {
					c.buttons[e.Text.Text] = e.ActionID + "\x00" + e.Value
				}
			}
		}
		d.mu.Lock()
		d.msgs = append(d.msgs, c)
		d.mu.Unlock()
	}
	d.api = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if to, ok := strings.CutPrefix(r.URL.Path, "/response/"); ok {
			var body struct {
				Blocks json.RawMessage `json:"blocks"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			record(to, string(body.Blocks))
			_, _ = io.WriteString(w, `{"ok":true}`)
			return
		}
		_ = r.ParseForm()
		switch r.URL.Path {
		case "/users.info":
			id := r.Form.Get("user")
			fmt.Fprintf(w, `{"ok":true,"user":{"id":%q,"profile":{"email":%q}}}`, id, people[id])
		case "/users.lookupByEmail":
			fmt.Fprintf(w, `{"ok":true,"user":{"id":%q}}`, slackID(r.Form.Get("email")))
		case "/chat.postMessage", "/chat.update":
			ch := r.Form.Get("channel")
			to := ch
			if p, ok := people[ch]; ok {
				to = p
			}
			if r.URL.Path == "/chat.postMessage" {
				record(to, r.Form.Get("blocks"))
			}
			d.mu.Lock()
			d.n++
			ts := fmt.Sprintf("1764500000.%06d", d.n)
			d.mu.Unlock()
			fmt.Fprintf(w, `{"ok":true,"channel":%q,"ts":%q}`, ch, ts)
		default:
			t.Errorf("fake Slack: unexpected %s", r.URL.Path)
			_, _ = io.WriteString(w, `{"ok":false,"error":"unknown_method"}`)
		}
	}))
	t.Cleanup(d.api.Close)
	ad, err := slackbot.New(slackbot.Config{BotToken: "xoxb-parity", SigningSecret: paritySlackSecret, APIURL: d.api.URL + "/",
		Handler: d.a.Bot, Refs: chatstore.Refs{DB: d.a.Store, Platform: slackbot.Platform}, Logger: storetest.Logger(t), ChannelInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	d.adapter = ad
	d.a.Service.Outbox, d.a.Service.SenderName = d.a.Store, senderName() // as serve has it
	d.a.Sender = ad
	d.srv = httptest.NewServer(ad.Handler())
	t.Cleanup(func() {
		d.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = ad.Close(ctx)
	})
	return d
}

func (d *slackDriver) app() *App { return d.a }

func (d *slackDriver) settle() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = d.adapter.Wait(ctx)
}

// post sends a signed form to one of the adapter's endpoints.
func (d *slackDriver) post(path string, form url.Values) {
	body := form.Encode()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	m := hmac.New(sha256.New, []byte(paritySlackSecret))
	fmt.Fprintf(m, "v0:%s:%s", ts, body)
	req, _ := http.NewRequest(http.MethodPost, d.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(m.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
	}
}

func (d *slackDriver) trigger(user string) (string, string) {
	d.mu.Lock()
	d.n++
	tr := fmt.Sprintf("parity.%d", d.n)
	d.mu.Unlock()
	// The response URL names whom the answer is for, so it is filed under them.
	return tr, d.api.URL + "/response/" + url.PathEscape(user)
}

func (d *slackDriver) command(s step) {
	tr, resp := d.trigger(s.user)
	text := strings.TrimPrefix(s.spec.Text(s.values), "/gpu ")
	d.post("/slack/commands", url.Values{"command": {"/gpu"}, "text": {text}, "user_id": {slackID(s.user)}, "channel_id": {"CGENERAL"},
		"trigger_id": {tr}, "response_url": {resp}})
}

func (d *slackDriver) click(t *testing.T, s step) {
	to := s.user
	if s.where != "" {
		to = s.where
	}
	d.mu.Lock()
	m := newest(t, d.msgs, to, s.label)
	d.mu.Unlock()
	actionID, value, _ := strings.Cut(m.buttons[s.label], "\x00")
	tr, resp := d.trigger(s.user)
	p, _ := json.Marshal(map[string]any{"type": "block_actions", "trigger_id": tr, "response_url": resp, "user": map[string]any{"id": slackID(s.user)},
		"channel": map[string]any{"id": "CGENERAL"}, "actions": []any{map[string]any{"type": "button", "action_id": actionID, "value": value, "block_id": "b"}}})
	d.post("/slack/interactions", url.Values{"payload": {string(p)}})
}

// --- Discord, against discordtest's fake ---

type discordDriver struct {
	e *discordEnv
	// answers are the interactions' answers, filed under whoever acted.
	answers []clickable
}

func newDiscordDriver(t *testing.T) driver {
	e := &discordEnv{t: t, app: parityApp(t), fake: discordtest.New(t), signer: discordtest.NewSigner()}
	e.settings = discordSettings{BotToken: discordtest.Token, PublicKey: e.signer.PublicKey(), AppID: discordtest.App, APIURL: e.fake.URL}
	e.start()
	return &discordDriver{e: e}
}

func (d *discordDriver) app() *App { return d.e.app }
func (d *discordDriver) settle()   { d.e.wait() }

func (d *discordDriver) account(person string) string {
	id, ok := d.e.app.Policy.Account(person, "discord")
	if !ok {
		d.e.t.Fatalf("%s has no Discord account in the policy", person)
	}
	return id
}

func (d *discordDriver) file(to string, m discordtest.Message) {
	c := clickable{to: to, buttons: map[string]string{}, raw: m}
	for _, b := range m.Buttons {
		c.buttons[b.Label] = b.CustomID
	}
	d.answers = append(d.answers, c)
}

func (d *discordDriver) command(s step) {
	var opts []discordtest.Opt
	for _, p := range s.spec.Params {
		v, ok := s.values[p.Name]
		if !ok {
			continue
		}
		o := discordtest.Opt{Name: p.Name, Value: v}
		switch p.Type {
		case commands.TInt:
			n, _ := strconv.Atoi(v)
			o.Value = n
		case commands.TFlag:
			o.Value = v == "true"
		}
		opts = append(opts, o)
	}
	m := d.e.command(d.account(s.user), s.spec.Name, opts...)
	d.file(s.user, m)
}

func (d *discordDriver) click(t *testing.T, s step) {
	// What each person and channel was sent: the answers to what they did, and the posts.
	msgs := append([]clickable(nil), d.answers...)
	channels := map[string]string{}
	for name, id := range d.e.app.Policy.Discord.Channels {
		channels[id] = name
	}
	for _, p := range d.e.fake.Posts() {
		to := channels[p.ChannelID]
		for _, id := range d.e.app.Policy.Directory {
			if acct, ok := d.e.app.Policy.Account(id.User, "discord"); ok && discordtest.DMChannel(acct) == p.ChannelID {
				to = id.User
			}
		}
		c := clickable{to: to, buttons: map[string]string{}, raw: p}
		for _, b := range p.Buttons {
			c.buttons[b.Label] = b.CustomID
		}
		msgs = append(msgs, c)
	}
	// Posts and answers interleave in time; the newest with the label is the one of the latest
	// post, unless an answer came after it, which the scenario does not need.
	to := s.user
	if s.where != "" {
		to = s.where
	}
	m := newest(t, msgs, to, s.label)
	answer := d.e.click(d.account(s.user), m.raw.(discordtest.Message), s.label)
	d.file(s.user, answer)
}
