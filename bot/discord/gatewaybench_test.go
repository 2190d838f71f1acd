package discord_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// BenchmarkGatewayAutocomplete is how long suggestions take in gateway mode with two replicas
// sharing a database: from the gateway delivering a keystroke's autocomplete to every replica to
// its answer reaching Discord (the fake, on loopback). The suggestions themselves come from a
// Complete that returns at once, so what is measured is the adapter's own path: whatever it waits
// for in the database before it answers, and the REST call.
func BenchmarkGatewayAutocomplete(b *testing.B) {
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		b.Run(name, func(b *testing.B) {
			fake, envs, _ := replicas(b, url(b), 2, nil)
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
