package discord_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/store/chatstore"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// gatewayEnv is newEnv in gateway mode with the gateway open until the test ends.
func gatewayEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, func(c *discord.Config) { c.PublicKey = "" })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.adapter.RunGateway(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunGateway: %v", err)
		}
	})
	return e
}

// dmAnswers delivers m and waits for its answers in the sender's DM channel: want of them.
func (e *env) dmAnswers(m discordtest.DM, want int) []discordtest.Message {
	e.t.Helper()
	ch := discordtest.DMChannel(m.User)
	before := len(e.fake.PostsTo(ch))
	if n := e.fake.DeliverMessage(m); n != 1 {
		e.t.Fatalf("delivered to %d clients", n)
	}
	if want > 0 && !e.fake.WaitFor(func() bool { return len(e.fake.PostsTo(ch)) >= before+want }) {
		e.t.Fatalf("%q: no answer in the DM", m.Content)
	}
	if want == 0 {
		time.Sleep(300 * time.Millisecond) // long enough for an answer that should not come
	}
	e.wait()
	return e.fake.PostsTo(ch)[before:]
}

// The gateway asks Discord for DMs to the app and for nothing else: no guild messages, and not
// the privileged Message Content intent, which DMs to the app do not need (Discord gives an app
// the content of the DMs it receives).
func TestTheGatewayAsksForDirectMessagesOnly(t *testing.T) {
	e := gatewayEnv(t)
	e.dmAnswers(discordtest.DM{User: alice, Content: "help"}, 1)
	const directMessages = 1 << 12
	if got := e.fake.Intents(); got != directMessages {
		t.Errorf("the gateway asked for intents %b, want DIRECT_MESSAGES (%b) alone", got, directMessages)
	}
}

// A DM to the app whose text is a /gpu command, with or without the slash or the "gpu", runs as
// that command for the person who sent it, and its answer comes back in the DM.
func TestADirectMessageThatIsACommandRunsAsThatCommand(t *testing.T) {
	e := gatewayEnv(t)
	cases := []struct{ typed, want string }{
		{"request 1 interactive for 4h", "/gpu request 1 interactive for 4h"},
		{"gpu status L-7", "/gpu status L-7"},
		{"/gpu help", "/gpu help"},
		{"  Help  ", "/gpu help"},
		// As a refusal's example writes it on Discord: the options by name.
		{"request gpus:2 class:train duration:8h", "/gpu request 2 train 8h"},
		{"deny lease:L-3 reason:use the interactive class", "/gpu deny L-3 use the interactive class"},
	}
	for _, c := range cases {
		got := e.dmAnswers(discordtest.DM{User: alice, Content: c.typed}, 1)
		if len(got) != 1 || !strings.Contains(got[0].Text(), "You asked: "+c.want) {
			t.Errorf("%q: answered %+v, want the answer to %q", c.typed, got, c.want)
		}
		reqs := e.handler.requests()
		if last := reqs[len(reqs)-1]; last.User != "alice@acme.example" || last.Text != c.want {
			t.Errorf("%q: ran %q as %q", c.typed, last.Text, last.User)
		}
	}
}

// A DM that is no command gets one sentence saying how to ask, with an example that works,
// written as it can be sent in the DM; it runs nothing, and does not repeat what was written (a
// mention in it would ping).
func TestADirectMessageThatIsNoCommandSaysHowToAsk(t *testing.T) {
	e := gatewayEnv(t)
	for _, typed := range []string{"hi, can I get a GPU? @everyone <@&700000000000000001>", "thanks!", "estimatee 1 train 4h"} {
		got := e.dmAnswers(discordtest.DM{User: bob, Content: typed}, 1)
		if len(got) != 1 {
			t.Fatalf("%q: %d answers, want one", typed, len(got))
		}
		text := got[0].Text()
		for _, w := range []string{"help", "request 1 interactive for 4h"} {
			if !strings.Contains(text, w) {
				t.Errorf("%q: the answer %q does not say %q", typed, text, w)
			}
		}
		if live.MatchString(text) || strings.Contains(text, "GPU?") {
			t.Errorf("%q: the answer repeats what was written: %q", typed, text)
		}
		if n := strings.Count(strings.TrimSpace(text), ". "); n > 1 {
			t.Errorf("%q: the answer is more than one sentence: %q", typed, text)
		}
	}
	if reqs := e.handler.requests(); len(reqs) != 0 {
		t.Errorf("ran %+v", reqs)
	}
	// The example runs when sent back.
	got := e.dmAnswers(discordtest.DM{User: bob, Content: "request 1 interactive for 4h"}, 1)
	if len(got) != 1 || !strings.Contains(got[0].Text(), "You asked: /gpu request 1 interactive for 4h") {
		t.Errorf("the example did not run: %+v", got)
	}
}

// Messages from bots (the app's own DMs included) and messages in a server's channels are not
// answered, so two bots never answer each other; a message delivered twice is answered once.
func TestOnlyPeoplesDirectMessagesAreAnsweredAndOnce(t *testing.T) {
	e := gatewayEnv(t)
	if got := e.dmAnswers(discordtest.DM{User: alice, Bot: true, Content: "help"}, 0); len(got) != 0 {
		t.Errorf("answered a bot: %+v", got)
	}
	e.fake.DeliverMessage(discordtest.DM{User: alice, Content: "help", Guild: guild, Channel: room})
	time.Sleep(300 * time.Millisecond)
	e.wait()
	if got := e.fake.PostsTo(room); len(got) != 0 {
		t.Errorf("answered in a server's channel: %+v", got)
	}
	m := discordtest.DM{ID: "910000000000000001", User: dana, Content: "help"}
	e.dmAnswers(m, 1)
	if got := e.dmAnswers(m, 0); len(got) != 0 {
		t.Errorf("answered the same message twice: %+v", got)
	}
	if reqs := e.handler.requests(); len(reqs) != 1 {
		t.Errorf("ran %d commands, want one: %+v", len(reqs), reqs)
	}
}

// With two replicas, each with the gateway open, Discord delivers a DM to both: it is answered
// once, by one of them; on SQLite and on PostgreSQL.
func TestADirectMessageIsAnsweredOnceBySeveralReplicas(t *testing.T) {
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) { dmAnsweredOnce(t, url(t)) })
	}
}

func dmAnsweredOnce(t *testing.T, url string) {
	db := storetest.Open(t, url)
	fake := discordtest.New(t)
	var (
		handlers []*recorder
		envs     []*env
		inboxes  []*keys
	)
	for _, owner := range []string{"one", "two"} {
		e := newEnv(t, func(c *discord.Config) {
			c.PublicKey, c.APIURL = "", fake.URL
			k := &keys{Inbox: chatstore.Inbox{DB: db, Owner: owner, Platform: discord.Platform}}
			inboxes = append(inboxes, k)
			c.Inbox = k
		})
		handlers, envs = append(handlers, e.handler), append(envs, e)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- e.adapter.RunGateway(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		if !fake.WaitFor(func() bool { return fake.Clients() == len(handlers) }) {
			t.Fatalf("replica %s never opened the gateway", owner)
		}
	}
	for i, text := range []string{"request 1 interactive for 4h", "hello"} {
		if n := fake.DeliverMessage(discordtest.DM{User: alice, Content: text}); n != 2 {
			t.Fatalf("delivered to %d replicas, want 2", n)
		}
		if !fake.WaitFor(func() bool { return len(fake.PostsTo(discordtest.DMChannel(alice))) > i }) {
			t.Fatalf("%q: no answer", text)
		}
		// Every replica has been told whether its claim on the DM was kept, and what it started
		// since is done.
		if !fake.WaitFor(func() bool {
			for _, k := range inboxes {
				claims := 0
				for _, key := range k.asked() {
					if strings.HasPrefix(key, "discord:gateway:message:") {
						claims++
					}
				}
				if claims != i+1 {
					return false
				}
			}
			return true
		}) {
			t.Fatalf("%q: a replica never claimed it", text)
		}
		for _, e := range envs {
			e.wait()
		}
		if got := fake.PostsTo(discordtest.DMChannel(alice)); len(got) != i+1 {
			t.Errorf("%q: %d answers, want one: %+v", text, len(got)-i, got[i:])
		}
	}
	if n := len(handlers[0].requests()) + len(handlers[1].requests()); n != 1 {
		t.Errorf("the command ran %d times, want once", n)
	}
}

// A DM whose command a process took and did not answer before it stopped is answered in the DM
// by another, once the first one's claim on it is gone.
func TestADirectMessageIsAnsweredAfterAStop(t *testing.T) {
	db := storetest.Open(t, storetest.SQLite(t))
	inbox := chatstore.Inbox{DB: db, Owner: "test", Platform: discord.Platform}
	stuck := stalled{got: make(chan string, 1)}
	gone := newEnv(t, func(c *discord.Config) { c.PublicKey, c.Handler, c.Inbox, c.InboxClaim = "", stuck, inbox, time.Hour })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gone.adapter.RunGateway(ctx) }()
	gone.fake.DeliverMessage(discordtest.DM{User: alice, Content: "gpu request 2"})
	<-stuck.got
	cancel()
	<-done
	stop(t, gone.adapter)
	if _, err := db.ReleaseDeliveryClaims(t.Context(), discord.Platform, []string{"test"}); err != nil {
		t.Fatal(err)
	}
	live := newEnv(t, func(c *discord.Config) { c.APIURL, c.Inbox, c.InboxClaim = gone.fake.URL, inbox, time.Hour })
	if n, err := live.adapter.Recover(t.Context()); err != nil || n != 1 {
		t.Fatalf("recovered %d commands (%v), want the DM's", n, err)
	}
	live.wait()
	got := gone.fake.PostsTo(discordtest.DMChannel(alice))
	if len(got) != 1 || !strings.Contains(got[0].Text(), "You asked: /gpu request 2") {
		t.Errorf("DMs %+v; want the command's answer", got)
	}
}

// The example in the answer to a DM that is no command is one that works for its sender
// (Config.DMExample: a class their team can use), asked about as the person they are; where there
// is none for them (or nobody can tell), the request subcommand's example.
func TestADirectMessageThatIsNoCommandOffersAnExampleForItsSender(t *testing.T) {
	asked := make(chan string, 4)
	e := newEnv(t, func(c *discord.Config) {
		c.PublicKey = ""
		c.DMExample = func(_ context.Context, req bot.Request) (string, bool) {
			asked <- req.User + " " + req.Account.User
			if req.User == "alice@acme.example" {
				return "/gpu request 1 train for 8h", true
			}
			return "", false
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.adapter.RunGateway(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	got := e.dmAnswers(discordtest.DM{User: alice, Content: "hello"}, 1)
	if len(got) != 1 || !strings.Contains(got[0].Text(), "send `request 1 train for 8h`") {
		t.Errorf("alice was answered %+v; want her example", got)
	}
	if who := <-asked; who != "alice@acme.example "+alice {
		t.Errorf("the example was asked for %q", who)
	}
	got = e.dmAnswers(discordtest.DM{User: bob, Content: "hello"}, 1)
	if len(got) != 1 || !strings.Contains(got[0].Text(), "send `request 1 interactive for 4h`") {
		t.Errorf("bob was answered %+v; want the request subcommand's example", got)
	}
}
