package discord_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// BenchmarkInteraction is the adapter's own cost of one signed interaction over HTTP, answered in
// the acknowledgement by a handler that does nothing: signature and timestamp checks, decoding,
// reading the options, rendering the answer with two buttons and encoding it. The handler's own
// work (the database, the scheduler) comes on top; BenchmarkDiscordAck in cmd/quartermaster
// measures the whole.
func BenchmarkInteraction(b *testing.B) {
	signer := discordtest.NewSigner()
	h := bot.HandlerFunc(func(_ context.Context, req bot.Request) []bot.Reply {
		return []bot.Reply{{Text: "L-1 is active: 1 × interactive (L40S) on l40s-01 GPU 0.", Sections: []bot.Section{{Title: "L-1",
			Fields: []bot.Field{{Label: "State", Value: "active"}, {Label: "GPUs", Value: "1 × interactive"}, {Label: "Time left", Value: "2h"}}}},
			Actions: []bot.Action{{Label: "Extend 1h", Command: "/gpu extend L-1 1h"}, {Label: "Release", Command: "/gpu release L-1", Style: "danger"}}}}
	})
	a, err := discord.New(discord.Config{BotToken: discordtest.Token, PublicKey: signer.PublicKey(), Commands: testCommands(), Handler: h, People: directory})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close(context.Background())
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 1},
			discordtest.Opt{Name: "class", Value: "interactive"}, discordtest.Opt{Name: "duration", Value: "2h"})
	}
	reqs := make([]*http.Request, b.N)
	for i := range reqs {
		reqs[i] = signer.Request("http://quartermaster"+discord.Path, bodies[i])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		w := httptest.NewRecorder()
		a.ServeHTTP(w, reqs[i])
		if w.Code != http.StatusOK {
			b.Fatalf("HTTP %d", w.Code)
		}
	}
}
