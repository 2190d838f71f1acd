package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	discordbot "github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestDiscordGatewayReplicasRunACommandOnce: two replicas of serve in gateway mode on one
// database are each delivered /gpu request by Discord's gateway; one makes the lease and
// answers, the other does nothing, so there is one lease and one answer (Discord would refuse a
// second); on SQLite and on PostgreSQL. Answers and leases are counted once every replica has
// been told whether its claim on the command was kept, and one was.
func TestDiscordGatewayReplicasRunACommandOnce(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			db := url(t)
			f := discordtest.New(t)
			start, _ := time.Parse(time.RFC3339, scenario)
			var apps []*App
			var inboxes []*claims
			for range 2 {
				a, err := NewApp(context.Background(), appOptions{flags: commonFlags{db: db}, simClock: true, start: start, logger: storetest.Logger(t)})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = a.Close() })
				// The adapter serve makes, its inbox watched.
				cfg := discordConfig(a, discordSettings{BotToken: discordtest.Token, AppID: discordtest.App, APIURL: f.URL}, storetest.Logger(t))
				in := &claims{Inbox: cfg.Inbox}
				cfg.Inbox = in
				inboxes = append(inboxes, in)
				ad, err := discordbot.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- ad.RunGateway(ctx) }()
				t.Cleanup(func() {
					cancel()
					<-done
					ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
					defer stop()
					_ = ad.Close(ctx)
				})
				apps = append(apps, a)
				if !f.WaitFor(func() bool { return f.Clients() == len(apps) }) {
					t.Fatal("a replica never opened the gateway")
				}
			}
			body := discordtest.Command(discordtest.Who{User: dAlice, Channel: dChannel, Guild: dGuild}, "gpu", "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "1h"))
			if n := f.Deliver(body); n != 2 {
				t.Fatalf("delivered to %d replicas, want 2", n)
			}
			var got discordtest.Message
			if !f.WaitFor(func() bool {
				m, ok := f.AnswerTo(discordtest.ID(body))
				got = m
				return ok && m.Type != 5
			}) {
				t.Fatalf("no answer: %+v", f.Answers())
			}
			// Every replica has had its say: each has been told whether its claim was kept (one
			// told no does nothing more), and one was told yes.
			key := "discord:gateway:" + discordtest.ID(body)
			if !f.WaitFor(func() bool {
				for _, in := range inboxes {
					if _, told := in.told(key); !told {
						return false
					}
				}
				return true
			}) {
				t.Fatal("a replica was never told whether its claim was kept")
			}
			kept := 0
			for _, in := range inboxes {
				if k, _ := in.told(key); k {
					kept++
				}
			}
			if kept != 1 {
				t.Errorf("%d replicas were told their claim was kept, want 1", kept)
			}
			if !strings.Contains(got.Text(), "L-1 is active") {
				t.Errorf("answer = %q", got.Text())
			}
			if n := f.AnsweredTwice(); n != 0 {
				t.Errorf("Discord refused %d second answers", n)
			}
			ls, err := apps[0].Service.List(context.Background(), qm.LeaseFilter{Kind: qm.AnyKind})
			if err != nil || len(ls) != 1 {
				t.Errorf("leases %+v (%v); want one", ls, err)
			}
		})
	}
}

// claims records what a replica's inbox answered each claim on a command.
type claims struct {
	bot.Inbox
	mu   sync.Mutex
	kept map[string]bool
}

// Accept records, once the inbox has answered, whether it kept each command.
func (c *claims) Accept(ctx context.Context, cmds []bot.Accepted, claim time.Duration) ([]bool, error) {
	kept, err := c.Inbox.Accept(ctx, cmds, claim)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kept == nil {
		c.kept = map[string]bool{}
	}
	for i, cmd := range cmds {
		c.kept[cmd.Key] = err == nil && i < len(kept) && kept[i]
	}
	return kept, err
}

// told is whether the inbox kept the command key, and whether it has answered yet.
func (c *claims) told(key string) (kept, answered bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept, answered = c.kept[key]
	return kept, answered
}
