package discord_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// TestPing: Discord's PING, sent when the endpoint URL is saved, is answered with a PONG.
func TestPing(t *testing.T) {
	e := newEnv(t)
	if r := e.send(discordtest.Ping()); r.Type != 1 {
		t.Fatalf("answer type %d, want 1 (PONG)", r.Type)
	}
	if n := len(e.handler.requests()); n != 0 {
		t.Errorf("a PING ran %d commands", n)
	}
}

// TestSignatures: a forged signature, a signature over another body, a missing or unparsable
// header and a stale or future timestamp all get 401, and nothing runs or is posted.
func TestSignatures(t *testing.T) {
	e := newEnv(t)
	body := discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 1})
	url := e.srv.URL + discord.Path
	other := discordtest.NewSigner()
	cases := map[string]*http.Request{
		"forged (another key)": other.Request(url, body),
		"over another body": func() *http.Request {
			r := e.signer.Request(url, body)
			r2 := e.signer.Request(url, []byte(strings.Replace(string(body), `"value":1`, `"value":8`, 1)))
			r2.Header = r.Header.Clone() // the header signs the first body
			return r2
		}(),
		"no signature": func() *http.Request {
			r := e.signer.Request(url, body)
			r.Header.Del("X-Signature-Ed25519")
			return r
		}(),
		"no timestamp": func() *http.Request {
			r := e.signer.Request(url, body)
			r.Header.Del("X-Signature-Timestamp")
			return r
		}(),
		"signature not hex": func() *http.Request {
			r := e.signer.Request(url, body)
			r.Header.Set("X-Signature-Ed25519", "zz"+r.Header.Get("X-Signature-Ed25519")[2:])
			return r
		}(),
		"stale timestamp":  e.signer.RequestAt(url, body, time.Now().Add(-10*time.Minute)),
		"future timestamp": e.signer.RequestAt(url, body, time.Now().Add(10*time.Minute)),
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			if code, _ := e.post(req); code != http.StatusUnauthorized {
				t.Errorf("HTTP %d, want 401", code)
			}
		})
	}
	e.wait()
	if n := len(e.handler.requests()); n != 0 {
		t.Errorf("%d commands ran", n)
	}
	if n := e.fake.Calls(); n != 0 {
		t.Errorf("Discord was called %d times", n)
	}
	// A signed one still works.
	if r := e.send(body); !strings.Contains(r.text(), "You asked: /gpu request 1") {
		t.Errorf("a signed request was answered %q", r.text())
	}
}

// TestNoPublicKeyRefusesAll: without a public key the endpoint trusts nothing.
func TestNoPublicKeyRefusesAll(t *testing.T) {
	e := newEnv(t, func(c *discord.Config) { c.PublicKey = "" })
	if code, _ := e.post(e.signer.Request(e.srv.URL+discord.Path, discordtest.Ping())); code != http.StatusUnauthorized {
		t.Fatalf("HTTP %d, want 401", code)
	}
	if _, err := discord.New(discord.Config{BotToken: "x", Handler: e.handler, People: directory, PublicKey: "abcd"}); err == nil ||
		!strings.Contains(err.Error(), "32 bytes in hex") {
		t.Errorf("a short public key: %v", err)
	}
}

// TestTypedOptionsBecomeText: a subcommand's typed options are read back into the command line
// the grammar reads, run as the person the Discord user is, keyed by the interaction id, and the
// answer is a private embed.
func TestTypedOptionsBecomeText(t *testing.T) {
	e := newEnv(t)
	body := discordtest.Command(in(alice), "gpu", "request",
		discordtest.Opt{Name: "exclusive", Value: true}, discordtest.Opt{Name: "duration", Value: " 4h "},
		discordtest.Opt{Name: "class", Value: "train"}, discordtest.Opt{Name: "gpus", Value: 8})
	r := e.send(body)
	reqs := e.handler.requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %+v", reqs)
	}
	want := bot.Request{User: "alice@acme.example", Text: "/gpu request 8 train 4h exclusive", Channel: room, Key: "discord:" + discordtest.ID(body),
		Account: bot.Account{Platform: "discord", User: alice}}
	if reqs[0] != want {
		t.Errorf("request = %+v, want %+v", reqs[0], want)
	}
	if r.Type != 4 || r.Data.Flags&64 == 0 || len(r.Data.Embeds) == 0 || r.Data.Embeds[0].Description != "You asked: /gpu request 8 train 4h exclusive" {
		t.Errorf("answer = %+v; want a private message with the reply as an embed", r)
	}
	// In a DM the user comes as "user", not "member".
	e.send(discordtest.Command(discordtest.Who{User: bob, Channel: "D1"}, "gpu", "help"))
	if reqs := e.handler.requests(); reqs[1].User != "bob@acme.example" || reqs[1].Text != "/gpu help" {
		t.Errorf("from a DM: %+v", reqs[1])
	}
}

// TestUnknownUser: someone the directory does not know is named to the handler by their account,
// which the handler answers (public commands) or refuses, saying whom to add.
func TestUnknownUser(t *testing.T) {
	e := newEnv(t)
	e.send(discordtest.Command(in(eve), "gpu", "help"))
	if reqs := e.handler.requests(); len(reqs) != 1 || reqs[0].User != "discord:"+eve {
		t.Fatalf("requests = %+v", reqs)
	}
}

// TestBadOptions: malformed or missing options get one private sentence naming the option, with
// an example that works, and run nothing.
func TestBadOptions(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name string
		body []byte
		want string
	}{
		{"missing required", discordtest.Command(in(alice), "gpu", "estimate", discordtest.Opt{Name: "gpus", Value: 2}, discordtest.Opt{Name: "class", Value: "train"}),
			"/gpu estimate needs the option duration (how long, like 8h). Example: /gpu estimate 2 interactive 8h"},
		{"text for a number", discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: "two", Type: 4}),
			`The option gpus of /gpu request takes a whole number, not "two". Example: /gpu request 1 interactive for 4h`},
		{"a fraction", discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 1.5}),
			"The option gpus of /gpu request takes a whole number, not 1.5."},
		{"below the minimum", discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 0}),
			"The option gpus of /gpu request must be at least 1, not 0."},
		{"text for a flag", discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "exclusive", Value: "yes", Type: 5}),
			`The option exclusive of /gpu request takes true or false, not "yes".`},
		{"a number for text", discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "class", Value: 3, Type: 3}),
			"The option class of /gpu request takes text, not 3."},
		{"two words for one", discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "duration", Value: "4 hours"}),
			`The option duration of /gpu request takes one word, not "4 hours".`},
		{"unknown option", discordtest.Command(in(alice), "gpu", "status", discordtest.Opt{Name: "lease", Value: "L-1"}, discordtest.Opt{Name: "colour", Value: "red"}),
			`/gpu status has no option "colour"; its option is lease. Example: /gpu status L-42`},
		{"twice", discordtest.Command(in(alice), "gpu", "status", discordtest.Opt{Name: "lease", Value: "L-1"}, discordtest.Opt{Name: "lease", Value: "L-2"}),
			"/gpu status got the option lease twice."},
		{"a subcommand no Discord command has", discordtest.Command(in(alice), "gpu", "tele port"),
			"/gpu tele port is not a command here; /gpu help lists them. Example: /gpu help"},
		{"another command", discordtest.Command(in(alice), "cpu", "request"),
			"/cpu is not Quartermaster's command; use /gpu. Example: /gpu help"},
		{"no subcommand", discordtest.Raw(in(alice), 2, map[string]any{"name": "gpu", "type": 1}),
			"/gpu needs a subcommand saying what to do. Example: /gpu help"},
		{"data of another kind", discordtest.Raw(in(alice), 2, map[string]any{"name": "gpu", "options": "request"}), ""},
		{"a forged button", discordtest.Click(in(alice), discordtest.Message{ID: "1", ChannelID: room}, "qm1.AAAAAAAAAAAAAAAA.approve L-1"),
			"This button was not made by Quartermaster here"},
		{"nobody", discordtest.Raw(discordtest.Who{Channel: room}, 2, map[string]any{"name": "gpu", "options": []any{map[string]any{"name": "help", "type": 1}}}),
			"Discord did not say who you are"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, r := e.post(e.signer.Request(e.srv.URL+discord.Path, c.body))
			if c.want == "" { // not even an interaction: refused as malformed
				if code != http.StatusBadRequest {
					t.Errorf("HTTP %d, want 400", code)
				}
				return
			}
			if code != http.StatusOK || r.Type != 4 || r.Data.Flags&64 == 0 {
				t.Fatalf("HTTP %d, answer %+v; want a private message", code, r)
			}
			if !strings.Contains(r.text(), c.want) || !strings.Contains(r.text(), "Example: /gpu ") {
				t.Errorf("answer %q; want %q and an example", r.text(), c.want)
			}
			if len(r.Data.Embeds) == 0 || r.Data.Embeds[0].Description == "" {
				t.Errorf("no embed: %+v", r)
			}
		})
	}
	e.wait()
	if n := len(e.handler.requests()); n != 0 {
		t.Errorf("%d commands ran: %+v", n, e.handler.requests())
	}
}

// TestRedelivery: the same interaction delivered twice runs once.
func TestRedelivery(t *testing.T) {
	e := newEnv(t)
	body := discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 1})
	e.send(body)
	r := e.send(body)
	e.wait()
	if n := len(e.handler.requests()); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
	if !strings.Contains(r.text(), "already answered") {
		t.Errorf("the second delivery was answered %q", r.text())
	}
}

// TestButtonsRunTheirTwin: a reply's actions become buttons; a click runs exactly the command the
// button was made with, as the person who clicked; a button whose id was tampered with runs
// nothing; an action too long for a button is written out.
func TestButtonsRunTheirTwin(t *testing.T) {
	e := newEnv(t)
	long := "/gpu request 1 interactive for 2h template jupyterlab dataset=/projects/vision/datasets/imagenet-2012-full"
	e.handler.reply = func(req bot.Request) []bot.Reply {
		if strings.Contains(req.Text, "status") {
			return []bot.Reply{{Text: "L-7 is active.", Actions: []bot.Action{
				{Label: "Extend 1h", Command: "/gpu extend L-7 1h"}, {Label: "Release", Command: "/gpu release L-7", Style: "danger"},
				{Label: "Again", Command: long}}}}
		}
		return []bot.Reply{{Text: "ran " + req.Text}}
	}
	r := e.send(discordtest.Command(in(alice), "gpu", "status", discordtest.Opt{Name: "lease", Value: "L-7"}))
	bs := r.buttons()
	if len(bs) != 2 || bs[0].Label != "Extend 1h" || bs[1].Label != "Release" || bs[1].Style != 4 || bs[0].Style != 2 {
		t.Fatalf("buttons = %+v", bs)
	}
	if !strings.Contains(r.text(), "Again: `"+long+"`") {
		t.Errorf("the long action is not written out: %q", r.text())
	}
	for _, b := range bs {
		if len(b.CustomID) > discord.MaxCustomID {
			t.Errorf("custom id %q is longer than Discord allows", b.CustomID)
		}
	}
	msg := discordtest.Message{ID: "1", ChannelID: room}
	answer := e.send(discordtest.Click(in(bob), msg, bs[1].CustomID))
	if !strings.Contains(answer.text(), "ran /gpu release L-7") || answer.Data.Flags&64 == 0 {
		t.Errorf("click answered %+v", answer)
	}
	reqs := e.handler.requests()
	if last := reqs[len(reqs)-1]; last.User != "bob@acme.example" || last.Text != "/gpu release L-7" {
		t.Errorf("the click ran %+v", last)
	}

	// The same signature over another command, or a changed command, runs nothing.
	mac := strings.Split(bs[1].CustomID, ".")[1]
	for _, forged := range []string{"qm1." + mac + ".approve L-7", strings.Replace(bs[1].CustomID, "L-7", "L-8", 1), "qm1..release L-7", "release L-7"} {
		r := e.send(discordtest.Click(in(bob), msg, forged))
		if !strings.Contains(r.text(), "not made by Quartermaster") {
			t.Errorf("forged %q answered %q", forged, r.text())
		}
	}
	if n := len(e.handler.requests()); n != len(reqs) {
		t.Errorf("forged buttons ran %d commands", n-len(reqs))
	}

	// Another installation's key does not make valid buttons here.
	other := newEnv(t, func(c *discord.Config) { c.ButtonKey = []byte("another key") })
	other.handler.reply = e.handler.reply
	theirs := other.send(discordtest.Command(in(alice), "gpu", "status", discordtest.Opt{Name: "lease", Value: "L-7"})).buttons()
	if r := e.send(discordtest.Click(in(bob), msg, theirs[1].CustomID)); !strings.Contains(r.text(), "not made by Quartermaster") {
		t.Errorf("a button of another installation answered %q", r.text())
	}
}

// TestDenyAsksWhy: a bare Deny button opens a form asking why; the form's answer runs the denial
// with the reason, as whoever sent it.
func TestDenyAsksWhy(t *testing.T) {
	e := newEnv(t)
	e.handler.reply = func(req bot.Request) []bot.Reply {
		if strings.Contains(req.Text, "status") {
			return []bot.Reply{{Text: "L-9 waits.", Actions: []bot.Action{{Label: "Deny L-9", Command: "/gpu deny L-9", Style: "danger"}}}}
		}
		return []bot.Reply{{Text: "ran " + req.Text}}
	}
	bs := e.send(discordtest.Command(in(dana), "gpu", "status", discordtest.Opt{Name: "lease", Value: "L-9"})).buttons()
	form := e.send(discordtest.Click(in(dana), discordtest.Message{ID: "1", ChannelID: room}, bs[0].CustomID))
	if form.Type != 9 || form.Data.CustomID == "" || !strings.Contains(form.Data.Title, "L-9") {
		t.Fatalf("answer = %+v; want a form", form)
	}
	if n := len(e.handler.requests()); n != 1 {
		t.Fatalf("opening the form ran a command")
	}
	r := e.send(discordtest.Submit(in(dana), form.Data.CustomID, "reason", "use the\ninteractive class"))
	reqs := e.handler.requests()
	if last := reqs[len(reqs)-1]; last.Text != "/gpu deny L-9 use the interactive class" || last.User != "dana@acme.example" {
		t.Errorf("the form ran %+v", last)
	}
	if !strings.Contains(r.text(), "ran /gpu deny L-9") {
		t.Errorf("answer %q", r.text())
	}
	if r := e.send(discordtest.Submit(in(dana), strings.Replace(form.Data.CustomID, "L-9", "L-1", 1), "reason", "x")); !strings.Contains(r.text(), "not made by Quartermaster") {
		t.Errorf("a forged form answered %q", r.text())
	}
}

// TestSlowWorkIsDeferred: a command slower than AnswerWithin is acknowledged at once as deferred
// (Discord shows it thinking), and its reply then replaces the deferral.
func TestSlowWorkIsDeferred(t *testing.T) {
	e := newEnv(t, func(c *discord.Config) { c.AnswerWithin = time.Millisecond })
	e.handler.delay = 200 * time.Millisecond
	body := discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 2})
	r := e.send(body)
	if r.Type != 5 || r.Data.Flags&64 == 0 {
		t.Fatalf("answer = %+v; want a private deferral (type 5)", r)
	}
	e.wait()
	as := e.fake.Answers()
	if len(as) != 1 || as[0].ID != "@original" || as[0].Interaction != discordtest.ID(body) || !strings.Contains(as[0].Text(), "You asked: /gpu request 2") {
		t.Fatalf("deferred answers = %+v", as)
	}
}

// TestBusyHandlerDefersAtOnce: when the handler already runs as many commands as it may, a new
// interaction is deferred at once instead of waiting for a turn it cannot get in time.
func TestBusyHandlerDefersAtOnce(t *testing.T) {
	e := newEnv(t, func(c *discord.Config) { c.MaxWork, c.AnswerWithin = 1, time.Hour })
	release := make(chan struct{})
	e.handler.reply = func(req bot.Request) []bot.Reply {
		if strings.Contains(req.Text, "request") {
			<-release
		}
		return []bot.Reply{{Text: "ran " + req.Text}}
	}
	first := make(chan response, 1)
	go func() {
		first <- e.send(discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 1}))
	}()
	if !e.fake.WaitFor(func() bool { return len(e.handler.requests()) == 1 }) {
		t.Fatal("the first command never ran")
	}
	second := make(chan response, 1)
	body := discordtest.Command(in(bob), "gpu", "help")
	go func() { second <- e.send(body) }()
	var r response
	select {
	case r = <-second:
		close(release)
	case <-time.After(10 * time.Second): // it waits for a turn: let it have one, and fail below
		close(release)
		r = <-second
	}
	if r.Type != 5 {
		t.Fatalf("the second interaction was answered with type %d, want 5 (deferred at once)", r.Type)
	}
	if f := <-first; f.Type != 4 || !strings.Contains(f.text(), "ran /gpu request 1") {
		t.Errorf("the first = %+v", f)
	}
	e.wait()
	if a, ok := e.fake.AnswerTo(discordtest.ID(body)); !ok || !strings.Contains(a.Text(), "ran /gpu help") {
		t.Errorf("the deferred answer = %+v", a)
	}
}

// TestNotices: notices go by DM to people with a Discord account and to channels with a Discord
// id, and are not sent here for others; an update edits the copies posted about its Ref (buttons
// gone), and when there are none it is posted.
func TestNotices(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ask := bot.Reply{Ref: "approval:L-5", Text: "Approval needed: L-5.", Actions: []bot.Action{{Label: "Approve L-5", Command: "/gpu approve L-5", Style: "primary"}}}
	for _, to := range []string{"dana@acme.example", "#vision-gpu", "lee@acme.example", "#language-gpu"} {
		r := ask
		r.To = to
		err := e.adapter.Send(ctx, r)
		if notHere := to == "lee@acme.example" || to == "#language-gpu"; notHere != errors.Is(err, discord.ErrNotHere) || !notHere && err != nil {
			t.Errorf("a notice to %s: %v", to, err)
		}
	}
	e.wait()
	toDana, toTeam := e.fake.PostsTo(discordtest.DMChannel(dana)), e.fake.PostsTo(team)
	if len(e.fake.Posts()) != 2 || len(toDana) != 1 || len(toTeam) != 1 {
		t.Fatalf("posts = %+v; want dana's DM and #vision-gpu", e.fake.Posts())
	}
	posts := []discordtest.Message{toDana[0], toTeam[0]}
	for _, p := range posts {
		if b, ok := p.Button("Approve L-5"); !ok || b.Style != 1 {
			t.Errorf("post %s has no primary Approve button: %+v", p.ChannelID, p.Buttons)
		}
	}
	for _, to := range []string{"dana@acme.example", "#vision-gpu", "alice@acme.example"} {
		if err := e.adapter.Send(ctx, bot.Reply{To: to, Ref: "approval:L-5", Update: true, Text: "L-5 was approved by dana@acme.example."}); err != nil {
			t.Fatal(err)
		}
	}
	e.wait()
	edits := e.fake.Edits()
	if len(edits) != 2 {
		t.Fatalf("edits = %+v", edits)
	}
	edited := map[string]bool{}
	for i, ed := range edits {
		edited[ed.ChannelID+"/"+ed.ID] = true
		if !ed.Components || len(ed.Buttons) != 0 || !strings.Contains(ed.Text(), "approved by dana") {
			t.Errorf("edit %d = %+v; want the buttons gone", i, ed)
		}
	}
	for _, p := range posts {
		if !edited[p.ChannelID+"/"+p.ID] {
			t.Errorf("%s/%s was not edited", p.ChannelID, p.ID)
		}
	}
	// alice had no copy, so hers is posted.
	if ps := e.fake.PostsTo(discordtest.DMChannel(alice)); len(ps) != 1 || !strings.Contains(ps[0].Text(), "approved") {
		t.Errorf("alice's DMs = %+v", ps)
	}
	if err := e.adapter.Send(ctx, bot.Reply{Text: "nobody"}); err == nil {
		t.Error("a notice without a recipient was taken")
	}
}

// TestRateLimited: Discord's HTTP 429 is waited out as its retry_after says, and the message is
// posted once.
func TestRateLimited(t *testing.T) {
	e := newEnv(t)
	e.fake.Limit("messages", 3)
	if err := e.adapter.Send(context.Background(), bot.Reply{To: "#vision-gpu", Text: "Showback is ready."}); err != nil {
		t.Fatal(err)
	}
	e.wait()
	if ps := e.fake.PostsTo(team); len(ps) != 1 {
		t.Fatalf("posts = %+v; want one after the 429s", ps)
	}
}

// TestNoticeFailureIsReported: a notice Discord does not take is reported to the caller, so the
// outbox tries it again later.
func TestNoticeFailureIsReported(t *testing.T) {
	e := newEnv(t, func(c *discord.Config) { c.BotToken = "a revoked token" })
	err := e.adapter.Send(context.Background(), bot.Reply{To: "#vision-gpu", Text: "Showback is ready."})
	if err == nil || errors.Is(err, discord.ErrNotHere) {
		t.Fatalf("a refused post: %v", err)
	}
	if n := len(e.fake.Posts()); n != 0 {
		t.Errorf("%d posts", n)
	}
}

// TestDeliverWithFiles: a scheduled post goes out with its files attached, once, even when the
// first try is refused with 429.
func TestDeliverWithFiles(t *testing.T) {
	e := newEnv(t)
	e.fake.Limit("messages", 1)
	png := []byte("\x89PNG\r\n\x1a\nchart")
	err := e.adapter.Deliver(context.Background(), bot.Reply{To: "#vision-gpu", Text: "Showback 2026-W48",
		Files: []bot.File{{Name: "showback-2026-W48.png", Type: "image/png", Content: png}, {Name: "showback-2026-W48.csv", Type: "text/csv", Content: []byte("team,gpu_hours\nvision,2\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	ps := e.fake.PostsTo(team)
	if len(ps) != 1 || len(ps[0].Files) != 2 || !strings.Contains(ps[0].Text(), "Showback 2026-W48") {
		t.Fatalf("posts = %+v", ps)
	}
	if f := ps[0].Files[0]; f.Name != "showback-2026-W48.png" || f.Type != "image/png" || string(f.Content) != string(png) {
		t.Errorf("file = %+v", f)
	}
	if f := ps[0].Files[1]; f.Name != "showback-2026-W48.csv" || !strings.Contains(string(f.Content), "vision,2") {
		t.Errorf("file = %+v", f)
	}
	if err := e.adapter.Deliver(context.Background(), bot.Reply{To: "lee@acme.example", Text: "x"}); !errors.Is(err, discord.ErrNotHere) {
		t.Errorf("to someone not on Discord: %v", err)
	}
}

// TestNoticesInOrder: notices to one recipient arrive in the order they were sent.
func TestNoticesInOrder(t *testing.T) {
	e := newEnv(t)
	e.fake.Limit("messages", 2)
	for i := range 5 {
		_ = e.adapter.Send(context.Background(), bot.Reply{To: "dana@acme.example", Text: fmt.Sprintf("notice %d", i)})
	}
	e.wait()
	ps := e.fake.PostsTo(discordtest.DMChannel(dana))
	if len(ps) != 5 {
		t.Fatalf("%d posts", len(ps))
	}
	for i, p := range ps {
		if !strings.Contains(p.Text(), fmt.Sprintf("notice %d", i)) {
			t.Errorf("post %d is %q", i, p.Text())
		}
	}
}

// TestAutocomplete: the option being typed is completed by the Completer for the person typing;
// Discord gets at most 25 suggestions; someone unknown gets none.
func TestAutocomplete(t *testing.T) {
	var asked []string
	e := newEnv(t, func(c *discord.Config) {
		c.Complete = func(_ context.Context, person, kind, typed string) []discord.Choice {
			asked = append(asked, person+" "+kind+" "+typed)
			var out []discord.Choice
			for i := range 40 {
				out = append(out, discord.Choice{Name: fmt.Sprintf("L-%d — active", i), Value: fmt.Sprintf("L-%d", i)})
			}
			return out
		}
	})
	r := e.send(discordtest.Autocomplete(in(alice), "gpu", "deny", discordtest.Opt{Name: "lease", Value: "L-1", Focused: true}, discordtest.Opt{Name: "reason", Value: "no"}))
	if r.Type != 8 || len(r.Data.Choices) != 25 || r.Data.Choices[3].Value != "L-3" {
		t.Fatalf("answer = %+v", r)
	}
	e.send(discordtest.Autocomplete(in(eve), "gpu", "status", discordtest.Opt{Name: "lease", Value: "", Focused: true}))
	// Someone the directory does not know is asked about as their account, as their commands are.
	if len(asked) != 2 || asked[0] != "alice@acme.example lease L-1" || asked[1] != "discord:"+eve+" lease " {
		t.Errorf("completer asked %q", asked)
	}
	if n := len(e.handler.requests()); n != 0 {
		t.Errorf("autocomplete ran %d commands", n)
	}
}

// TestGateway: interactions delivered over the gateway are answered over REST by the same code.
func TestGateway(t *testing.T) {
	e := newEnv(t, func(c *discord.Config) { c.PublicKey = "" })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.adapter.RunGateway(ctx) }()
	body := discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 3})
	if n := e.fake.Deliver(body); n != 1 {
		t.Fatalf("delivered to %d clients", n)
	}
	if !e.fake.WaitFor(func() bool { return len(e.fake.Answers()) == 1 }) {
		t.Fatal("no answer over REST")
	}
	a := e.fake.Answers()[0]
	if a.Type != 4 || a.Interaction != discordtest.ID(body) || !a.Ephemeral || !strings.Contains(a.Text(), "You asked: /gpu request 3") {
		t.Errorf("answer = %+v", a)
	}
	if reqs := e.handler.requests(); len(reqs) != 1 || reqs[0].User != "alice@acme.example" {
		t.Errorf("requests = %+v", reqs)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("RunGateway: %v", err)
	}
}

// TestRegister: registration replaces the application's commands with /gpu, one subcommand per
// command, options typed and required ones first; in a guild when one is given.
func TestRegister(t *testing.T) {
	f := discordtest.New(t)
	cfg := discord.Config{BotToken: discordtest.Token, AppID: discordtest.App, APIURL: f.URL, Commands: testCommands()}
	got, err := discord.Register(context.Background(), cfg, guild)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID == "" || got.Name != "gpu" {
		t.Errorf("registered %+v", got)
	}
	ow := f.Overwrites()
	if len(ow) != 1 || ow[0].App != discordtest.App || ow[0].Guild != guild || len(ow[0].Commands) != 1 {
		t.Fatalf("overwrites = %+v", ow)
	}
	subs := ow[0].Commands[0]["options"].([]any)
	if len(subs) != 5 {
		t.Fatalf("%d subcommands", len(subs))
	}
	deny := subs[3].(map[string]any)
	opts := deny["options"].([]any)
	first := opts[0].(map[string]any)
	if deny["name"] != "deny" || first["name"] != "lease" || first["required"] != true || first["autocomplete"] != true || first["type"] != 3.0 {
		t.Errorf("deny = %v", deny)
	}
	req := subs[0].(map[string]any)["options"].([]any)
	if g := req[0].(map[string]any); g["name"] != "gpus" || g["type"] != 4.0 || g["min_value"] != 1.0 {
		t.Errorf("gpus = %v", g)
	}
	if c := req[1].(map[string]any); len(c["choices"].([]any)) != 2 || c["autocomplete"] != false {
		t.Errorf("class = %v", c)
	}
	if x := req[3].(map[string]any); x["type"] != 5.0 {
		t.Errorf("exclusive = %v", x)
	}
	est := subs[1].(map[string]any)["options"].([]any)
	for _, o := range est {
		if o.(map[string]any)["required"] != true {
			t.Errorf("estimate's option %v is not required", o)
		}
	}

	if _, err := discord.Register(context.Background(), discord.Config{BotToken: "wrong", AppID: discordtest.App, APIURL: f.URL, Commands: testCommands()}, ""); err == nil {
		t.Error("a wrong token registered")
	}
	if _, err := discord.Register(context.Background(), discord.Config{BotToken: discordtest.Token, APIURL: f.URL}, ""); err == nil ||
		!strings.Contains(err.Error(), "DISCORD_APP_ID") {
		t.Errorf("no app id: %v", err)
	}
}

// TestValidate: what Discord would refuse is refused here with a sentence.
func TestValidate(t *testing.T) {
	if err := discord.Validate(discord.ApplicationCommand("gpu", testCommands())); err != nil {
		t.Fatalf("the test commands: %v", err)
	}
	var many []discord.Command
	for i := range 26 {
		many = append(many, discord.Command{Name: fmt.Sprintf("c%d", i), Description: "x"})
	}
	bad := append(testCommands(), discord.Command{Name: "Bad Name", Description: ""})
	for name, ac := range map[string]struct {
		cmds []discord.Command
		want string
	}{
		"too many":  {many, "has 26 subcommands; Discord allows 25"},
		"bad names": {bad, `the subcommand name "Bad Name" must be`},
	} {
		err := discord.Validate(discord.ApplicationCommand("gpu", ac.cmds))
		if err == nil || !strings.Contains(err.Error(), ac.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestRenderLimits: a long answer goes out as several messages, each within Discord's limits,
// with nothing cut; at most 25 buttons, five to a row, under the last, and the actions beyond
// them written out.
func TestRenderLimits(t *testing.T) {
	e := newEnv(t)
	e.handler.reply = func(bot.Request) []bot.Reply {
		r := bot.Reply{Text: strings.Repeat("long text ", 100)}
		for i := range 30 {
			r.Sections = append(r.Sections, bot.Section{Title: fmt.Sprintf("L-%d", i), Fields: []bot.Field{{Label: "State", Value: strings.Repeat("active ", 200)}, {Label: "GPUs", Value: "1"}}})
			r.Actions = append(r.Actions, bot.Action{Label: fmt.Sprintf("Release L-%d", i), Command: fmt.Sprintf("/gpu release L-%d", i)})
		}
		return []bot.Reply{r}
	}
	body := discordtest.Command(in(alice), "gpu", "help")
	r := e.send(body)
	e.wait()
	all := append([]discordtest.Message{{Embeds: r.Data.Embeds, Ephemeral: r.Data.Flags&64 != 0, Buttons: r.buttons()}}, e.fake.FollowUps(discordtest.ID(body))...)
	for i, m := range all {
		checkMessage(t, fmt.Sprintf("part %d of %d", i+1, len(all)), m)
	}
	var want []string
	for i := range 30 {
		want = append(want, fmt.Sprintf("L-%d", i), strings.TrimSpace(strings.Repeat("active ", 200)))
	}
	checkInOrder(t, all, want)
	last := all[len(all)-1]
	if len(last.Buttons) != 25 {
		t.Errorf("%d buttons", len(last.Buttons))
	}
	if len(all) > 1 {
		if ms := e.fake.FollowUps(discordtest.ID(body)); len(ms[len(ms)-1].Buttons) != 25 {
			t.Errorf("the last follow-up has %d buttons", len(ms[len(ms)-1].Buttons))
		}
	} else if len(r.Data.Components) != 5 {
		t.Errorf("%d rows", len(r.Data.Components))
	}
	if !strings.Contains(last.Text(), "Release L-29: `/gpu release L-29`") {
		t.Errorf("the buttons past 25 are not written out")
	}
}

// TestMoreValuesThanChoicesAreSuggested: an option with more values than Discord lists as
// choices (a catalog of 30 classes), or with values that would take the command past Discord's
// 8000 characters (long class names), still registers: the values are suggested as they are
// typed instead, filtered by what was typed, to anyone.
func TestMoreValuesThanChoicesAreSuggested(t *testing.T) {
	withClasses := func(classes []string) []discord.Command {
		cmds := testCommands()
		for _, c := range cmds {
			for i := range c.Options {
				if c.Options[i].Name == "class" {
					c.Options[i].Choices = classes
				}
			}
		}
		return cmds
	}
	var many, long []string
	for i := range 30 {
		many = append(many, fmt.Sprintf("class-%02d", i))
	}
	for i := range 20 {
		long = append(long, fmt.Sprintf("h200-shared-notebooks-for-team-%02d-xxxxxxx", i))
	}
	// Long names: several such options would pass 8000 characters together.
	longCmds := withClasses(long)
	for i := range 6 {
		longCmds = append(longCmds, discord.Command{Name: fmt.Sprintf("pick%d", i), Description: "another command with a class",
			Options: []discord.Option{{Name: "class", Choices: long, Description: "the class"}}, Text: textOf("pick", nil)})
	}
	for name, cmds := range map[string][]discord.Command{"30 classes": withClasses(many), "long names": longCmds} {
		f := discordtest.New(t)
		if _, err := discord.Register(context.Background(), discord.Config{BotToken: discordtest.Token, AppID: discordtest.App, APIURL: f.URL, Commands: cmds}, guild); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		suggested := 0
		for _, s := range f.Overwrites()[0].Commands[0]["options"].([]any) {
			opts, _ := s.(map[string]any)["options"].([]any)
			for _, o := range opts {
				om := o.(map[string]any)
				if om["name"] != "class" {
					continue
				}
				ch, _ := om["choices"].([]any)
				if om["autocomplete"] == true {
					suggested++
				} else if len(ch) == 0 {
					t.Errorf("%s: /gpu %s's class has neither choices nor suggestions", name, s.(map[string]any)["name"])
				}
			}
		}
		if suggested == 0 {
			t.Errorf("%s: no class option is suggested as typed", name)
		}
	}

	e := newEnv(t, func(c *discord.Config) { c.Commands = withClasses(many) })
	r := e.send(discordtest.Autocomplete(in(eve), "gpu", "request", discordtest.Opt{Name: "class", Value: "CLASS-2", Focused: true}))
	var got []string
	for _, c := range r.Data.Choices {
		got = append(got, fmt.Sprint(c.Value))
	}
	if r.Type != 8 || strings.Join(got, " ") != "class-20 class-21 class-22 class-23 class-24 class-25 class-26 class-27 class-28 class-29" {
		t.Errorf("suggested %q", got)
	}
	r = e.send(discordtest.Autocomplete(in(alice), "gpu", "request", discordtest.Opt{Name: "class", Value: "", Focused: true}))
	if len(r.Data.Choices) != 25 {
		t.Errorf("%d suggestions for nothing typed; Discord shows 25", len(r.Data.Choices))
	}
}

// TestChannelsMatchWhateverTheirCase: a channel the policy writes "#Vision-GPU" in one place and
// "#vision-gpu" in another is one channel: its notices are posted to its Discord id.
func TestChannelsMatchWhateverTheirCase(t *testing.T) {
	e := newEnv(t, func(c *discord.Config) { c.Channels = map[string]string{"#Vision-GPU": team} })
	if err := e.adapter.Send(context.Background(), bot.Reply{To: "#vision-gpu", Text: "Approval needed: L-5."}); err != nil {
		t.Fatal(err)
	}
	e.wait()
	if ps := e.fake.PostsTo(team); len(ps) != 1 || !strings.Contains(ps[0].Text(), "Approval needed: L-5.") {
		t.Errorf("posts to the team's channel = %+v", e.fake.Posts())
	}
}

// TestRateLimitedByAProxy: a 429 that is a proxy's HTML page in front of Discord (Cloudflare's),
// not Discord's JSON, is waited out as its Retry-After says, and the message is posted once.
func TestRateLimitedByAProxy(t *testing.T) {
	e := newEnv(t)
	e.fake.LimitWithPage("messages", 2)
	if err := e.adapter.Send(context.Background(), bot.Reply{To: "#vision-gpu", Text: "Showback is ready."}); err != nil {
		t.Fatal(err)
	}
	e.wait()
	if ps := e.fake.PostsTo(team); len(ps) != 1 {
		t.Fatalf("posts = %+v; want one after the 429s", ps)
	}
}

// TestAutocompleteReadsOnlyTheOptionTyped: while an option is typed, Discord sends the other
// options as they stand, unchecked, an integer as the text typed so far ("2", or "2x" half
// typed). Suggestions for the option typed come all the same: with 30 classes, /gpu request
// gpus:2 class:… still suggests classes, and a lease is suggested beside a half-typed reason.
func TestAutocompleteReadsOnlyTheOptionTyped(t *testing.T) {
	var many []string
	for i := range 30 {
		many = append(many, fmt.Sprintf("class-%02d", i))
	}
	e := newEnv(t, func(c *discord.Config) {
		for _, cmd := range c.Commands {
			for i := range cmd.Options {
				if cmd.Options[i].Name == "class" {
					cmd.Options[i].Choices = many
				}
			}
		}
		c.Complete = func(_ context.Context, person, kind, typed string) []discord.Choice {
			return []discord.Choice{{Name: "L-7 — active", Value: "L-7"}}
		}
	})
	for _, gpus := range []any{"2", "2x", 2} {
		r := e.send(discordtest.Autocomplete(in(alice), "gpu", "estimate",
			discordtest.Opt{Name: "gpus", Value: gpus, Type: 4}, discordtest.Opt{Name: "class", Value: "class-2", Focused: true},
			discordtest.Opt{Name: "duration", Value: "two words"}))
		if r.Type != 8 || len(r.Data.Choices) != 10 {
			t.Errorf("gpus %#v: answer = %+v; want the 10 classes with class-2 in them", gpus, r)
		}
	}
	long := strings.Repeat("why ", 200)
	r := e.send(discordtest.Autocomplete(in(alice), "gpu", "deny", discordtest.Opt{Name: "lease", Value: "L", Focused: true}, discordtest.Opt{Name: "reason", Value: long}))
	if r.Type != 8 || len(r.Data.Choices) != 1 || r.Data.Choices[0].Value != "L-7" {
		t.Errorf("beside a long reason: answer = %+v", r)
	}
}

// TestLongFreeTextReachesTheHandler: a free-text option holds what Discord lets it (6000
// characters), such as a template's parameters, each of which may be 512 characters long: the
// handler gets it whole and judges it, as it judges the same line typed in Slack.
func TestLongFreeTextReachesTheHandler(t *testing.T) {
	params := discord.Option{Name: "params", Description: "the template's key=value parameters"}
	e := newEnv(t, func(c *discord.Config) {
		c.Commands = append(c.Commands, discord.Command{Name: "submit", Description: "a batch job", Example: "/gpu submit cuda-smoke",
			Options: []discord.Option{{Name: "template", Required: true, OneWord: true}, params}, Text: textOf("submit", []discord.Option{{Name: "template"}, params})})
	})
	long := "script=" + strings.Repeat("a", 400) + ".py space=" + strings.Repeat("b", 400) + ".yaml trials=8"
	r := e.send(discordtest.Command(in(alice), "gpu", "submit", discordtest.Opt{Name: "template", Value: "hparam-sweep"}, discordtest.Opt{Name: "params", Value: long}))
	e.wait()
	reqs := e.handler.requests()
	if len(reqs) != 1 || reqs[0].Text != "/gpu submit hparam-sweep "+long {
		t.Fatalf("the handler got %d requests (%+v); answer %q", len(reqs), reqs, r.text())
	}
}

// TestEditOnlyPostsNothing: an edit-only update edits the recipient's copies of its Ref and,
// where they have none, posts nothing.
func TestEditOnlyPostsNothing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	ask := bot.Reply{To: "dana@acme.example", Ref: "approval:L-5", Text: "Approval needed: L-5.", Actions: []bot.Action{{Label: "Approve L-5", Command: "/gpu approve L-5", Style: "primary"}}}
	if err := e.adapter.Send(ctx, ask); err != nil {
		t.Fatal(err)
	}
	e.wait()
	for _, to := range []string{"dana@acme.example", "alice@acme.example"} {
		if err := e.adapter.Send(ctx, bot.Reply{To: to, Ref: "approval:L-5", Update: true, EditOnly: true, Text: "L-5 is no longer yours to decide."}); err != nil {
			t.Fatal(err)
		}
	}
	e.wait()
	if edits := e.fake.Edits(); len(edits) != 1 || len(edits[0].Buttons) != 0 || !strings.Contains(edits[0].Text(), "no longer yours") {
		t.Errorf("edits = %+v; want dana's copy, without buttons", edits)
	}
	if ps := e.fake.PostsTo(discordtest.DMChannel(alice)); len(ps) != 0 {
		t.Errorf("alice, who had no copy, was sent %+v", ps)
	}
}

// TestDenyFormTakesTheWholeReason: the Deny form takes as long a reason as /gpu deny does
// (bot.MaxReason characters), and the denial gets all of it.
func TestDenyFormTakesTheWholeReason(t *testing.T) {
	e := newEnv(t)
	e.handler.reply = func(req bot.Request) []bot.Reply {
		if strings.Contains(req.Text, "status") {
			return []bot.Reply{{Text: "L-9 waits.", Actions: []bot.Action{{Label: "Deny L-9", Command: "/gpu deny L-9", Style: "danger"}}}}
		}
		return []bot.Reply{{Text: "ran " + req.Text}}
	}
	bs := e.send(discordtest.Command(in(dana), "gpu", "status", discordtest.Opt{Name: "lease", Value: "L-9"})).buttons()
	form := e.send(discordtest.Click(in(dana), discordtest.Message{ID: "1", ChannelID: room}, bs[0].CustomID))
	if form.Type != 9 {
		t.Fatalf("answer = %+v; want a form", form)
	}
	var maxLength []int
	var walk func([]json.RawMessage)
	walk = func(cs []json.RawMessage) {
		for _, c := range cs {
			var x struct {
				MaxLength  int               `json:"max_length"`
				Components []json.RawMessage `json:"components"`
			}
			if err := json.Unmarshal(c, &x); err == nil {
				if x.MaxLength > 0 {
					maxLength = append(maxLength, x.MaxLength)
				}
				walk(x.Components)
			}
		}
	}
	walk(form.Data.Components)
	if len(maxLength) != 1 || maxLength[0] != bot.MaxReason {
		t.Errorf("the form's reason takes at most %v characters, want %d", maxLength, bot.MaxReason)
	}
	reason := strings.Repeat("é", bot.MaxReason-1) + "!"
	e.send(discordtest.Submit(in(dana), form.Data.CustomID, "reason", reason))
	reqs := e.handler.requests()
	if last := reqs[len(reqs)-1]; last.Text != "/gpu deny L-9 "+reason {
		t.Errorf("the form ran %q, want the whole %d-character reason", last.Text, bot.MaxReason)
	}
}
