package store_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

var bothDatabases = map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres}

// TestAccountLinks runs on both databases: a link round-trips whole, a new login replaces the
// old one, links are found by email (newest login first), a re-check that raced a newer login
// changes nothing, and unlinking by account or by email removes exactly those rows.
func TestAccountLinks(t *testing.T) {
	for name, url := range bothDatabases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := storetest.Open(t, url(t))
			ctx := context.Background()
			t0 := time.Date(2026, 11, 30, 9, 0, 0, 123456789, time.FixedZone("CST", -6*3600))
			alice := qm.Account{Platform: "slack", Workspace: "T1", User: "U1"}
			if _, err := db.AccountLink(ctx, alice); !errors.Is(err, qm.ErrNotFound) {
				t.Fatalf("unlinked account: %v", err)
			}
			l := qm.AccountLink{Account: alice, Issuer: "https://idp.example", Subject: "s-1", Email: "Alice@Acme.example",
				Groups: []string{"ai-vision", "a group, with commas"}, LoginAt: t0, Tokens: []byte{0, 1, 2, 255}}
			if err := db.SaveAccountLink(ctx, l); err != nil {
				t.Fatal(err)
			}
			got, err := db.AccountLink(ctx, alice)
			if err != nil {
				t.Fatal(err)
			}
			want := l
			want.Email = "alice@acme.example"
			want.LoginAt = store.StoredTime(t0)
			want.CheckedAt = store.StoredTime(t0)
			if !reflect.DeepEqual(*got, want) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", *got, want)
			}

			// The same person on Discord logs in later; a stranger on another workspace has the same user id.
			disc := qm.Account{Platform: "discord", Workspace: "G9", User: "77"}
			other := qm.Account{Platform: "slack", Workspace: "T2", User: "U1"}
			if err := db.SaveAccountLink(ctx, qm.AccountLink{Account: disc, Issuer: "i", Subject: "s-1", Email: "alice@acme.example", LoginAt: t0.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if err := db.SaveAccountLink(ctx, qm.AccountLink{Account: other, Issuer: "i", Subject: "s-2", Email: "bob@acme.example", LoginAt: t0}); err != nil {
				t.Fatal(err)
			}
			byEmail, err := db.AccountLinksByEmail(ctx, "ALICE@acme.example")
			if err != nil || len(byEmail) != 2 || byEmail[0].Account != disc || byEmail[1].Account != alice || byEmail[0].Groups != nil {
				t.Fatalf("links of alice: %v %+v", err, byEmail)
			}

			// A re-check records new groups; one that started before a newer login changes nothing.
			ok, err := db.UpdateAccountGroups(ctx, alice, t0, []string{"ai-language"}, t0.Add(24*time.Hour), []byte("sealed"))
			if err != nil || !ok {
				t.Fatalf("re-check: %v %v", ok, err)
			}
			got, _ = db.AccountLink(ctx, alice)
			if !reflect.DeepEqual(got.Groups, []string{"ai-language"}) || !got.CheckedAt.Equal(store.StoredTime(t0.Add(24*time.Hour))) || string(got.Tokens) != "sealed" || !got.LoginAt.Equal(store.StoredTime(t0)) {
				t.Fatalf("after re-check: %+v", got)
			}
			// A re-check that confirmed no groups keeps them and their check, keeps the new
			// tokens and notes when the provider gave none; a re-check that reads groups clears it.
			if ok, err := db.KeepAccountGroups(ctx, alice, t0, t0.Add(25*time.Hour), []byte("rotated")); err != nil || !ok {
				t.Fatalf("keep groups: %v %v", ok, err)
			}
			got, _ = db.AccountLink(ctx, alice)
			if !reflect.DeepEqual(got.Groups, []string{"ai-language"}) || !got.CheckedAt.Equal(store.StoredTime(t0.Add(24*time.Hour))) || string(got.Tokens) != "rotated" || !got.NoGroupsAt.Equal(store.StoredTime(t0.Add(25*time.Hour))) {
				t.Fatalf("after a re-check without groups: %+v", got)
			}
			if ok, err := db.UpdateAccountGroups(ctx, alice, t0, []string{"ai-language"}, t0.Add(26*time.Hour), []byte("sealed")); err != nil || !ok {
				t.Fatalf("re-check: %v %v", ok, err)
			}
			if got, _ = db.AccountLink(ctx, alice); !got.NoGroupsAt.IsZero() {
				t.Fatalf("groups read again, still noted as not given: %+v", got)
			}
			if ok, err := db.KeepAccountGroups(ctx, alice, t0.Add(time.Minute), t0.Add(27*time.Hour), nil); err != nil || ok {
				t.Fatalf("a re-check of another login wrote: %v %v", ok, err)
			}
			relogin := *got
			relogin.LoginAt, relogin.CheckedAt, relogin.Groups = t0.Add(2*time.Hour), t0.Add(2*time.Hour), []string{"ai-vision"}
			if err := db.SaveAccountLink(ctx, relogin); err != nil {
				t.Fatal(err)
			}
			if ok, err := db.UpdateAccountGroups(ctx, alice, t0, nil, t0.Add(48*time.Hour), nil); err != nil || ok {
				t.Fatalf("a re-check older than the last login wrote: %v %v", ok, err)
			}
			if got, _ = db.AccountLink(ctx, alice); !reflect.DeepEqual(got.Groups, []string{"ai-vision"}) {
				t.Fatalf("the newer login's groups were overwritten: %v", got.Groups)
			}

			due, err := db.AccountLinksCheckedBefore(ctx, t0.Add(90*time.Minute), 0, 10)
			if err != nil || len(due) != 2 || due[0].Account != other || due[1].Account != disc {
				t.Fatalf("links due for a check: %v %+v", err, due)
			}
			if due, _ := db.AccountLinksCheckedBefore(ctx, t0.Add(90*time.Minute), 0, 1); len(due) != 1 || due[0].Account != other {
				t.Fatalf("limit 1 gave %+v", due)
			}
			if due, _ := db.AccountLinksCheckedBefore(ctx, t0.Add(90*time.Minute), 1, 10); len(due) != 1 || due[0].Account != disc {
				t.Fatalf("offset 1 gave %+v", due)
			}

			if ok, err := db.DeleteAccountLink(ctx, other); err != nil || !ok {
				t.Fatalf("unlink: %v %v", ok, err)
			}
			if ok, _ := db.DeleteAccountLink(ctx, other); ok {
				t.Fatal("unlinking twice said it unlinked")
			}
			if n, err := db.DeleteAccountLinksByEmail(ctx, "alice@ACME.example"); err != nil || n != 2 {
				t.Fatalf("unlink alice everywhere: %d %v", n, err)
			}
			if _, err := db.AccountLink(ctx, disc); !errors.Is(err, qm.ErrNotFound) {
				t.Fatalf("still linked: %v", err)
			}
		})
	}
}

// TestLoginLinks runs on both databases: a link is opened once and only before it expires,
// found by the hash of its state, completed once (saving the account link with it), and pruned
// when old. Two callbacks completing the same link at once link the account once.
func TestLoginLinks(t *testing.T) {
	for name, url := range bothDatabases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := storetest.Open(t, url(t))
			ctx := context.Background()
			t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
			acct := qm.Account{Platform: "slack", Workspace: "T1", User: "U1"}
			mk := func(hash string) {
				t.Helper()
				if err := db.CreateLoginLink(ctx, qm.LoginLink{Hash: hash, Account: acct, ChatEmail: "Alice@acme.example", Resume: "/gpu approve L-7", CreatedAt: t0, ExpiresAt: t0.Add(10 * time.Minute)}); err != nil {
					t.Fatal(err)
				}
			}
			mk("h1")
			if err := db.CreateLoginLink(ctx, qm.LoginLink{Hash: "h1", Account: acct, CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)}); err == nil {
				t.Fatal("a second link with the same hash was kept")
			}
			l, err := db.LoginLink(ctx, "h1")
			if err != nil || l.Account != acct || l.ChatEmail != "alice@acme.example" || l.Resume != "/gpu approve L-7" || !l.ExpiresAt.Equal(t0.Add(10*time.Minute)) || !l.OpenedAt.IsZero() || l.StateHash != "" {
				t.Fatalf("link: %+v %v", l, err)
			}
			if ok, err := db.OpenLoginLink(ctx, "h1", "s1", t0.Add(10*time.Minute)); err != nil || ok {
				t.Fatalf("opened at its expiry: %v %v", ok, err)
			}
			if ok, err := db.OpenLoginLink(ctx, "h1", "s1", t0.Add(time.Minute)); err != nil || !ok {
				t.Fatalf("open: %v %v", ok, err)
			}
			if ok, _ := db.OpenLoginLink(ctx, "h1", "s2", t0.Add(2*time.Minute)); ok {
				t.Fatal("opened twice")
			}
			if l, err := db.LoginLinkByState(ctx, "s1"); err != nil || l.Hash != "h1" || !l.OpenedAt.Equal(t0.Add(time.Minute)) {
				t.Fatalf("by state: %+v %v", l, err)
			}
			if _, err := db.LoginLinkByState(ctx, "s2"); !errors.Is(err, qm.ErrNotFound) {
				t.Fatalf("a state never stored: %v", err)
			}

			link := qm.AccountLink{Account: acct, Issuer: "i", Subject: "s", Email: "alice@acme.example", Groups: []string{"g"}, LoginAt: t0.Add(2 * time.Minute)}
			var wg sync.WaitGroup
			var mu sync.Mutex
			wins := 0
			for range 4 {
				wg.Go(func() {
					ok, err := db.CompleteLogin(ctx, "h1", link, t0.Add(2*time.Minute))
					if err != nil {
						t.Error(err)
					}
					if ok {
						mu.Lock()
						wins++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if wins != 1 {
				t.Fatalf("%d callbacks completed the same link", wins)
			}
			if got, err := db.AccountLink(ctx, acct); err != nil || got.Email != "alice@acme.example" {
				t.Fatalf("linked: %+v %v", got, err)
			}

			// A link never opened cannot be completed; a refused login finishes its link for good.
			mk("h2")
			if ok, _ := db.CompleteLogin(ctx, "h2", link, t0); ok {
				t.Fatal("completed a link that was never opened")
			}
			if ok, err := db.FinishLoginLink(ctx, "h2", t0); err != nil || !ok {
				t.Fatalf("finish: %v %v", ok, err)
			}
			if ok, _ := db.OpenLoginLink(ctx, "h2", "s3", t0); ok {
				t.Fatal("a finished link opened")
			}
			if ok, _ := db.FinishLoginLink(ctx, "h2", t0); ok {
				t.Fatal("finished twice")
			}
			if n, err := db.PruneLoginLinks(ctx, t0.Add(11*time.Minute)); err != nil || n != 2 {
				t.Fatalf("pruned %d, %v", n, err)
			}
			if _, err := db.LoginLink(ctx, "h1"); !errors.Is(err, qm.ErrNotFound) {
				t.Fatalf("pruned link still there: %v", err)
			}
		})
	}
}
