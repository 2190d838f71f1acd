package discord_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// stuck is an inbox whose writes do not come back until their context ends: a database that
// has stopped answering, or a SQLite file whose write lock another process holds.
type stuck struct{ bot.Inbox }

func (stuck) Accept(ctx context.Context, _ []bot.Accepted, _ time.Duration) ([]bool, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// BenchmarkGatewayAutocomplete is how long suggestions take in gateway mode with two replicas
// sharing a database: from the gateway delivering a keystroke's autocomplete to every replica to
// the first answer reaching Discord (the fake, on loopback). The suggestions themselves come from
// a Complete that returns at once, so what is measured is the adapter's own path: whatever it
// waits for in the database before it answers, and the REST call. "stuck" is SQLite with an
// inbox that does not answer.
func BenchmarkGatewayAutocomplete(b *testing.B) {
	for _, c := range []struct {
		name  string
		url   func(testing.TB) string
		stuck bool
	}{{"sqlite", storetest.SQLite, false}, {"postgres", storetest.Postgres, false}, {"stuck", storetest.SQLite, true}} {
		b.Run(c.name, func(b *testing.B) {
			fake, envs, _ := replicas(b, c.url(b), 2, func(cfg *discord.Config) {
				if c.stuck {
					cfg.Inbox = stuck{cfg.Inbox}
				}
			})
			bodies := make([][]byte, b.N)
			for i := range bodies {
				bodies[i] = discordtest.Autocomplete(in(alice), "gpu", "status", discordtest.Opt{Name: "lease", Value: "L-", Focused: true})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				id := discordtest.ID(bodies[i])
				fake.Deliver(bodies[i])
				deadline := time.Now().Add(5 * time.Second)
				for {
					if _, ok := fake.AnswerTo(id); ok {
						break
					}
					if time.Now().After(deadline) {
						b.Fatalf("keystroke %d: no suggestions within 5 s", i)
					}
					time.Sleep(20 * time.Microsecond)
				}
			}
			b.StopTimer()
			for _, e := range envs {
				e.wait()
			}
		})
	}
}
