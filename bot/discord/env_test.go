package discord_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// Discord users of the tests, and the people they are.
const (
	alice = "100000000000000001"
	bob   = "100000000000000002"
	dana  = "100000000000000004"
	eve   = "100000000000000666" // nobody the directory knows
	guild = "500000000000000001"
	room  = "600000000000000001" // the channel commands are typed in
	team  = "600000000000000002" // #vision-gpu on Discord
)

// people is a directory in a map.
type people map[string]string // Discord user id -> person

func (p people) Person(_ context.Context, id string) (string, bool, error) {
	v, ok := p[id]
	return v, ok, nil
}

func (p people) UserID(_ context.Context, person string) (string, bool, error) {
	for id, v := range p {
		if strings.EqualFold(v, person) {
			return id, true, nil
		}
	}
	return "", false, nil
}

var directory = people{alice: "alice@acme.example", bob: "bob@acme.example", dana: "dana@acme.example"}

// textOf joins a command's words and its options' values in order, as a grammar would read them.
func textOf(words string, opts []discord.Option) func(map[string]string) string {
	return func(v map[string]string) string {
		parts := []string{"/gpu", words}
		for _, o := range opts {
			switch x := v[o.Name]; {
			case x == "":
			case o.Type == discord.OptionBoolean && x == "true":
				parts = append(parts, o.Name)
			case o.Type == discord.OptionBoolean:
			default:
				parts = append(parts, x)
			}
		}
		return strings.Join(parts, " ")
	}
}

// testCommands are a few /gpu subcommands shaped like the command table's.
func testCommands() []discord.Command {
	one := 1.0
	mk := func(name, ex string, opts ...discord.Option) discord.Command {
		return discord.Command{Name: name, Description: "the " + name + " command", Example: ex, Options: opts, Text: textOf(name, opts)}
	}
	return []discord.Command{
		mk("request", "/gpu request 1 interactive for 4h",
			discord.Option{Name: "gpus", Type: discord.OptionInteger, MinValue: &one, Description: "how many GPUs"},
			discord.Option{Name: "class", Choices: []string{"interactive", "train"}, OneWord: true, Description: "the class"},
			discord.Option{Name: "duration", OneWord: true, Description: "how long, like 4h"},
			discord.Option{Name: "exclusive", Type: discord.OptionBoolean, Description: "whole nodes"}),
		mk("estimate", "/gpu estimate 2 interactive 8h",
			discord.Option{Name: "gpus", Type: discord.OptionInteger, Required: true, Description: "how many GPUs"},
			discord.Option{Name: "class", Required: true, OneWord: true, Description: "the class"},
			discord.Option{Name: "duration", Required: true, OneWord: true, Description: "how long, like 8h"}),
		mk("status", "/gpu status L-42", discord.Option{Name: "lease", Required: true, OneWord: true, Autocomplete: "lease", Description: "a lease id"}),
		mk("deny", "/gpu deny L-42 use the interactive class",
			discord.Option{Name: "lease", Required: true, OneWord: true, Autocomplete: "lease", Description: "a lease id"},
			discord.Option{Name: "reason", Description: "why"}),
		mk("help", "/gpu help"),
	}
}

// recorder is a handler that records what it is asked and answers with whatever reply returns.
type recorder struct {
	mu    sync.Mutex
	reqs  []bot.Request
	reply func(req bot.Request) []bot.Reply
	delay time.Duration
}

func (r *recorder) Handle(ctx context.Context, req bot.Request) []bot.Reply {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	f := r.reply
	r.mu.Unlock()
	if r.delay > 0 {
		time.Sleep(r.delay)
	}
	if f == nil {
		return []bot.Reply{{Text: "You asked: " + req.Text}}
	}
	return f(req)
}

func (r *recorder) requests() []bot.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bot.Request(nil), r.reqs...)
}

// env is the adapter behind an HTTP server, talking to a fake Discord.
type env struct {
	t       testing.TB
	fake    *discordtest.Fake
	signer  *discordtest.Signer
	handler *recorder
	adapter *discord.Adapter
	srv     *httptest.Server
	cfg     discord.Config
}

func newEnv(t testing.TB, adjust ...func(*discord.Config)) *env {
	t.Helper()
	e := &env{t: t, fake: discordtest.New(t), signer: discordtest.NewSigner(), handler: &recorder{}}
	e.cfg = discord.Config{
		BotToken:  discordtest.Token,
		PublicKey: e.signer.PublicKey(),
		AppID:     discordtest.App,
		APIURL:    e.fake.URL,
		Commands:  testCommands(),
		Handler:   e.handler,
		People:    directory,
		Channels:  map[string]string{"#vision-gpu": team},
		// Answers in the acknowledgement unless a test slows the handler down on purpose.
		AnswerWithin: 5 * time.Second,
	}
	for _, f := range adjust {
		f(&e.cfg)
	}
	a, err := discord.New(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.adapter = a
	mux := http.NewServeMux()
	a.Register(mux)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		e.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return e
}

// wait lets every interaction's work and every queued message finish.
func (e *env) wait() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.adapter.Wait(ctx); err != nil {
		e.t.Fatalf("work still in flight: %v", err)
	}
}

// response is an interaction's answer as the endpoint gave it.
type response struct {
	Type int `json:"type"`
	Data struct {
		Content    string               `json:"content"`
		Flags      int                  `json:"flags"`
		Embeds     []discordtest.Embed  `json:"embeds"`
		Components []json.RawMessage    `json:"components"`
		Choices    []discordtest.Choice `json:"choices"`
		CustomID   string               `json:"custom_id"`
		Title      string               `json:"title"`
	} `json:"data"`
}

// text is all the text of an answer.
func (r response) text() string {
	return discordtest.Message{Content: r.Data.Content, Embeds: r.Data.Embeds}.Text()
}

// buttons are an answer's buttons.
func (r response) buttons() []discordtest.Button {
	var out []discordtest.Button
	var walk func([]json.RawMessage)
	walk = func(cs []json.RawMessage) {
		for _, c := range cs {
			var x struct {
				Type       int               `json:"type"`
				Label      string            `json:"label"`
				Style      int               `json:"style"`
				CustomID   string            `json:"custom_id"`
				Components []json.RawMessage `json:"components"`
			}
			_ = json.Unmarshal(c, &x)
			if x.Type == 2 {
				out = append(out, discordtest.Button{Label: x.Label, Style: x.Style, CustomID: x.CustomID})
			}
			walk(x.Components)
		}
	}
	walk(r.Data.Components)
	return out
}

// post sends a request and returns its status and decoded answer.
func (e *env) post(req *http.Request) (int, response) {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r response
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &r); err != nil {
			e.t.Fatalf("answer is not JSON: %q", b)
		}
		// Discord refuses an answer past its limits as it refuses a message.
		if m, err := discordtest.Response(b); err == nil {
			if why := discordtest.OverLimits(m); why != "" {
				e.t.Errorf("Discord would refuse the answer: %s", why)
			}
		}
	}
	return resp.StatusCode, r
}

// send posts an interaction signed correctly, now, and expects 200.
func (e *env) send(body []byte) response {
	e.t.Helper()
	code, r := e.post(e.signer.Request(e.srv.URL+discord.Path, body))
	if code != http.StatusOK {
		e.t.Fatalf("interaction: HTTP %d", code)
	}
	return r
}

// in is where a test's interactions come from: a user in the guild's channel.
func in(user string) discordtest.Who {
	return discordtest.Who{User: user, Channel: room, Guild: guild}
}
