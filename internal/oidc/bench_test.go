package oidc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// benchLinks is how many people are linked in the benchmarks.
const benchLinks = 2000

// BenchmarkDoor is what single sign-on adds to every chat command that needs to know who asks:
// reading the chat account's link at the door (Link) and the person's groups for the domain
// (Groups, by email), with benchLinks people linked. The provider is not involved.
func BenchmarkDoor(b *testing.B) {
	for name, url := range map[string]func(testing.TB) string{"SQLite": storetest.SQLite, "Postgres": storetest.Postgres} {
		b.Run(name, func(b *testing.B) {
			db := storetest.Open(b, url(b))
			ctx := context.Background()
			clock := sim.NewClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
			svc, err := oidc.New(oidc.Config{Issuer: "https://idp.acme.example", ClientID: "qm", PublicURL: "https://qm.acme.example"}, db, clock, nil)
			if err != nil {
				b.Fatal(err)
			}
			accts := make([]qm.Account, benchLinks)
			for i := range accts {
				accts[i] = qm.Account{Platform: "slack", Workspace: "T0ACME", User: fmt.Sprintf("U%06d", i)}
				if err := db.SaveAccountLink(ctx, qm.AccountLink{Account: accts[i], Issuer: "https://idp.acme.example", Subject: fmt.Sprint(i),
					Email: fmt.Sprintf("p%06d@acme.example", i), Groups: []string{"ai-vision", "staff"}, LoginAt: clock.Now()}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				a := accts[i%benchLinks]
				l, current, err := svc.Link(ctx, a)
				if err != nil || !current {
					b.Fatal(err)
				}
				if _, ok := svc.Groups(ctx, l.Email); !ok {
					b.Fatal("no groups")
				}
			}
		})
	}
}
