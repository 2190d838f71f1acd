package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestChatAccounts runs on both databases: the chat account a person last signed in from on a
// platform outlives its link (signed out, revoked), gives way to the account of a later sign-in
// on that platform, is no longer theirs once someone else signs in from it, and is forgotten
// when a platform admin unlinks it or them.
func TestChatAccounts(t *testing.T) {
	for name, url := range bothDatabases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := storetest.Open(t, url(t))
			ctx := context.Background()
			t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
			first := qm.Account{Platform: "discord", User: "940000000000000001"}
			second := qm.Account{Platform: "discord", User: "940000000000000002"}
			has := func(email string, want qm.Account, ok bool) {
				t.Helper()
				got, found, err := db.ChatAccount(ctx, email, "discord")
				if err != nil || found != ok || (ok && got != want) {
					t.Fatalf("chat account of %s: %+v %v %v; want %+v %v", email, got, found, err, want, ok)
				}
			}
			has("naledi@karoo.example", qm.Account{}, false)
			if err := db.SaveAccountLink(ctx, qm.AccountLink{Account: first, Issuer: "i", Subject: "s-1", Email: "Naledi@Karoo.example", LoginAt: t0}); err != nil {
				t.Fatal(err)
			}
			has("naledi@karoo.example", first, true)
			if _, err := db.DeleteAccountLink(ctx, first); err != nil { // signed out
				t.Fatal(err)
			}
			has("NALEDI@karoo.example", first, true)
			if err := db.SaveAccountLink(ctx, qm.AccountLink{Account: second, Issuer: "i", Subject: "s-1", Email: "naledi@karoo.example", LoginAt: t0.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			has("naledi@karoo.example", second, true)
			if _, found, _ := db.ChatAccount(ctx, "naledi@karoo.example", "slack"); found {
				t.Fatal("a Discord account is taken for Slack")
			}
			// Someone else signs in from the second account: it is theirs now.
			if err := db.SaveAccountLink(ctx, qm.AccountLink{Account: second, Issuer: "i", Subject: "s-2", Email: "thabo@karoo.example", LoginAt: t0.Add(2 * time.Hour)}); err != nil {
				t.Fatal(err)
			}
			has("naledi@karoo.example", qm.Account{}, false)
			has("thabo@karoo.example", second, true)
			if err := db.ForgetChatAccount(ctx, second); err != nil {
				t.Fatal(err)
			}
			has("thabo@karoo.example", qm.Account{}, false)
			if err := db.SaveAccountLink(ctx, qm.AccountLink{Account: first, Issuer: "i", Subject: "s-2", Email: "thabo@karoo.example", LoginAt: t0.Add(3 * time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if err := db.ForgetChatAccountsOf(ctx, "Thabo@karoo.example"); err != nil {
				t.Fatal(err)
			}
			has("thabo@karoo.example", qm.Account{}, false)
		})
	}
}
