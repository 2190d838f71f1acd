package store_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestGroupsChangesAreKeptWithTheChange runs on both databases: a change of groups a re-check
// found is written with the link's change (or its deletion) in one go, only while the link is as
// the re-check read it, and kept until it is told; the process that found it holds it, another
// takes it only once that claim lapses or is released, and a change told is told by nobody again.
func TestGroupsChangesAreKeptWithTheChange(t *testing.T) {
	for name, url := range bothDatabases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := storetest.Open(t, url(t))
			ctx := context.Background()
			t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
			alice := qm.Account{Platform: "slack", Workspace: "T1", User: "U1"}
			bob := qm.Account{Platform: "discord", User: "42"}
			for _, l := range []qm.AccountLink{
				{Account: alice, Issuer: "i", Subject: "s-1", Email: "alice@acme.example", Groups: []string{"ai-vision"}, LoginAt: t0, Tokens: []byte("secret")},
				{Account: bob, Issuer: "i", Subject: "s-2", Email: "bob@acme.example", Groups: []string{"ai-vision", "vision-leads"}, LoginAt: t0, Tokens: []byte("secret")},
			} {
				if err := db.SaveAccountLink(ctx, l); err != nil {
					t.Fatal(err)
				}
			}
			read := func(a qm.Account) *qm.AccountLink {
				t.Helper()
				l, err := db.AccountLink(ctx, a)
				if errors.Is(err, qm.ErrNotFound) {
					return nil
				}
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			al, bl := read(alice), read(bob)
			t1 := t0.Add(time.Hour)
			after := *al
			after.Groups, after.CheckedAt, after.Tokens = []string{"staff"}, t1, []byte("rotated")
			id1, ok, err := db.RecordGroupsChange(ctx, *al, &after, t1, "p1", t1.Add(10*time.Minute))
			if err != nil || !ok || id1 == 0 {
				t.Fatalf("recording alice's change: %d %v %v", id1, ok, err)
			}
			if got := read(alice); strings.Join(got.Groups, ",") != "staff" || !got.CheckedAt.Equal(t1) || string(got.Tokens) != "rotated" {
				t.Fatalf("alice's link after the change: %+v", got)
			}
			// Another replica read the link before that change: it writes nothing and keeps nothing.
			if _, ok, err := db.RecordGroupsChange(ctx, *al, &after, t1, "p2", t1.Add(10*time.Minute)); err != nil || ok {
				t.Fatalf("a second change of the same read: %v %v", ok, err)
			}
			// Bob's sign-in was revoked: the link goes, the change stays.
			id2, ok, err := db.RecordGroupsChange(ctx, *bl, nil, t1, "p1", t1.Add(10*time.Minute))
			if err != nil || !ok {
				t.Fatalf("recording bob's revocation: %v %v", ok, err)
			}
			if read(bob) != nil {
				t.Fatal("a revoked link is still there")
			}
			if _, ok, err := db.RecordGroupsChange(ctx, *bl, nil, t1, "p2", t1.Add(10*time.Minute)); err != nil || ok {
				t.Fatalf("a second revocation: %v %v", ok, err)
			}

			// Held by p1: nobody else takes them while the claim holds.
			if got, err := db.ClaimGroupsChanges(ctx, "p2", t1.Add(time.Minute), 5*time.Minute, 10); err != nil || len(got) != 0 {
				t.Fatalf("p2 took p1's changes: %+v %v", got, err)
			}
			if owners, err := db.GroupsChangeClaimers(ctx, t1.Add(time.Minute)); err != nil || !reflect.DeepEqual(owners, []string{"p1"}) {
				t.Fatalf("claimers: %v %v", owners, err)
			}
			got, err := db.ClaimGroupsChanges(ctx, "p1", t1.Add(time.Minute), 5*time.Minute, 10)
			if err != nil || len(got) != 2 || got[0].ID != id1 || got[1].ID != id2 {
				t.Fatalf("p1's changes: %+v %v", got, err)
			}
			if b, a := got[0].Before, got[0].After; b.Account != alice || strings.Join(b.Groups, ",") != "ai-vision" || a == nil ||
				strings.Join(a.Groups, ",") != "staff" || !a.CheckedAt.Equal(t1) || b.Email != "alice@acme.example" || b.Tokens != nil || a.Tokens != nil {
				t.Fatalf("alice's change: %+v -> %+v", b, a)
			}
			if b, a := got[1].Before, got[1].After; b.Account != bob || strings.Join(b.Groups, ",") != "ai-vision,vision-leads" || a != nil {
				t.Fatalf("bob's change: %+v -> %+v", b, a)
			}
			if _, ok, err := db.GroupsChangeTold(ctx, id1, t1.Add(time.Minute), nil); err != nil || !ok {
				t.Fatal(ok, err)
			}
			// p1 stops before telling bob's: released, p2 takes it at once, and only it.
			if n, err := db.ReleaseGroupsChanges(ctx, []string{"p1"}); err != nil || n != 1 {
				t.Fatalf("release: %d %v", n, err)
			}
			got, err = db.ClaimGroupsChanges(ctx, "p2", t1.Add(2*time.Minute), 5*time.Minute, 10)
			if err != nil || len(got) != 1 || got[0].ID != id2 {
				t.Fatalf("p2 after the release: %+v %v", got, err)
			}
			// A claim that lapsed (p2 died mid-telling) is taken over.
			got, err = db.ClaimGroupsChanges(ctx, "p3", t1.Add(8*time.Minute), 5*time.Minute, 10)
			if err != nil || len(got) != 1 || got[0].ID != id2 {
				t.Fatalf("p3 after p2's claim lapsed: %+v %v", got, err)
			}
			if _, ok, err := db.GroupsChangeTold(ctx, id2, t1.Add(8*time.Minute), nil); err != nil || !ok {
				t.Fatal(ok, err)
			}
			for _, p := range []string{"p1", "p2", "p3"} {
				if got, err := db.ClaimGroupsChanges(ctx, p, t1.Add(time.Hour), 5*time.Minute, 10); err != nil || len(got) != 0 {
					t.Fatalf("%s after all were told: %+v %v", p, got, err)
				}
			}
			if n, err := db.PruneGroupsChanges(ctx, t1.Add(5*time.Minute)); err != nil || n != 1 {
				t.Fatalf("prune: %d %v", n, err)
			}
		})
	}
}

// TestWhatAChangeOfGroupsTellsIsQueuedAsItIsMarkedTold runs on both databases: the messages a
// change of someone's groups gives (to them, to their team's budget owners) are written into the
// outbox in the transaction that marks the change told, so a chat platform that is down delays
// them and a crash loses none; a replica that tells the same change again (its claim had lapsed
// while another told it) queues nothing, so none is sent twice.
func TestWhatAChangeOfGroupsTellsIsQueuedAsItIsMarkedTold(t *testing.T) {
	for name, url := range bothDatabases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := storetest.Open(t, url(t))
			ctx := context.Background()
			t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
			alice := qm.Account{Platform: "slack", Workspace: "T1", User: "U1"}
			l := qm.AccountLink{Account: alice, Issuer: "i", Subject: "s-1", Email: "alice@acme.example", Groups: []string{"ai-vision"}, LoginAt: t0}
			if err := db.SaveAccountLink(ctx, l); err != nil {
				t.Fatal(err)
			}
			before, err := db.AccountLink(ctx, alice)
			if err != nil {
				t.Fatal(err)
			}
			t1 := t0.Add(time.Hour)
			after := *before
			after.Groups, after.CheckedAt = []string{"staff"}, t1
			id, ok, err := db.RecordGroupsChange(ctx, *before, &after, t1, "p1", t1.Add(10*time.Minute))
			if err != nil || !ok {
				t.Fatalf("recording the change: %v %v", ok, err)
			}
			says := func(to, text string) qm.Notice {
				return qm.Notice{Kind: qm.NoticeMessage, To: []string{to}, Message: []byte(`{"text":"` + text + `"}`)}
			}
			ns := []qm.Notice{says("alice@acme.example", "You are no longer in team vision."), says("dana@acme.example", "alice is no longer in team vision.")}
			rows, ok, err := db.GroupsChangeTold(ctx, id, t1.Add(time.Minute), ns)
			if err != nil || !ok || len(rows) != 2 {
				t.Fatalf("told: %v %v %v", rows, ok, err)
			}
			// p1's claim had lapsed and p2 told it too: nothing more is queued.
			if again, ok, err := db.GroupsChangeTold(ctx, id, t1.Add(12*time.Minute), ns); err != nil || ok || len(again) != 0 {
				t.Fatalf("told twice: %v %v %v", again, ok, err)
			}
			if n, _, err := db.OutboxLag(ctx, t1.Add(time.Hour)); err != nil || n != 2 {
				t.Fatalf("the outbox holds %d notices (%v), want 2", n, err)
			}
			got, err := db.ClaimNotices(ctx, "sender", nil, t1.Add(time.Hour), 10, time.Minute)
			if err != nil || len(got) != 2 {
				t.Fatalf("claimed: %+v %v", got, err)
			}
			for i, q := range got {
				if q.Notice.Kind != qm.NoticeMessage || q.Notice.Lease != nil || !reflect.DeepEqual(q.Notice.To, ns[i].To) || string(q.Notice.Message) != string(ns[i].Message) {
					t.Errorf("notice %d: %+v, want %+v", i, q.Notice, ns[i])
				}
			}
		})
	}
}
