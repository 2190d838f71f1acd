package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestDiscordGatewayReplicasRunACommandOnce: two replicas of serve in gateway mode on one
// database are each delivered /gpu request by Discord's gateway; one makes the lease and
// answers, the other does nothing, so there is one lease and one answer (Discord would refuse a
// second); on SQLite and on PostgreSQL.
func TestDiscordGatewayReplicasRunACommandOnce(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			db := url(t)
			f := discordtest.New(t)
			start, _ := time.Parse(time.RFC3339, scenario)
			var apps []*App
			for range 2 {
				a, err := NewApp(context.Background(), appOptions{flags: commonFlags{db: db}, simClock: true, start: start, logger: storetest.Logger(t)})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = a.Close() })
				ad, err := newDiscordApp(a, discordSettings{BotToken: discordtest.Token, AppID: discordtest.App, APIURL: f.URL}, storetest.Logger(t))
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
			time.Sleep(500 * time.Millisecond) // for a second answer, should one come
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
