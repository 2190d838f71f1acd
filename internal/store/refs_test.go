package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestMessageRefs runs on both databases: copies are listed per platform and ref in the order
// saved, a copy saved twice is kept once, and pruning forgets the old ones.
func TestMessageRefs(t *testing.T) {
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := storetest.Open(t, url(t))
			ctx := context.Background()
			old := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
			refs := []store.MessageRef{
				{Platform: "slack", Ref: "approval:L-1", Recipient: "dana@acme.example", Channel: "D1", MessageID: "1.1", CreatedAt: old},
				{Platform: "slack", Ref: "approval:L-1", Recipient: "#vision-gpu", Channel: "C1", MessageID: "1.2"},
				{Platform: "slack", Ref: "approval:L-2", Recipient: "dana@acme.example", Channel: "D1", MessageID: "2.1"},
				{Platform: "discord", Ref: "approval:L-1", Recipient: "dana@acme.example", Channel: "9", MessageID: "77"},
				{Platform: "slack", Ref: "approval:L-1", Recipient: "dana@acme.example", Channel: "D1", MessageID: "1.1"}, // again
			}
			for _, r := range refs {
				if err := db.SaveMessageRef(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			got, err := db.MessageRefs(ctx, "slack", "approval:L-1")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].MessageID != "1.1" || got[1].MessageID != "1.2" || got[1].Recipient != "#vision-gpu" {
				t.Fatalf("slack copies of approval:L-1 = %+v", got)
			}
			if !got[0].CreatedAt.Equal(old) {
				t.Errorf("created_at = %v, want %v", got[0].CreatedAt, old)
			}
			who, err := db.MessageRefRecipients(ctx, "approval:L-1")
			if err != nil || len(who) != 2 || who[0] != "#vision-gpu" || who[1] != "dana@acme.example" {
				t.Errorf("recipients of approval:L-1 on every platform = %q, %v", who, err)
			}
			if err := db.SaveMessageRef(ctx, store.MessageRef{Platform: "slack", Ref: "x"}); err == nil {
				t.Error("a ref without channel and message id was saved")
			}
			n, err := db.PruneMessageRefs(ctx, old.Add(time.Hour))
			if err != nil || n != 1 {
				t.Fatalf("pruned %d, %v; want 1", n, err)
			}
			got, _ = db.MessageRefs(ctx, "slack", "approval:L-1")
			if len(got) != 1 || got[0].MessageID != "1.2" {
				t.Fatalf("after pruning: %+v", got)
			}
		})
	}
}

// TestRetiredMessageRefs runs on both databases: once the copies of a ref posted to someone are
// retired (edited for a former approver), they are no longer among its recipients, on any
// platform, while the others' are; a copy posted to them later is listed again, and every copy
// is still there to be edited by later notices.
func TestRetiredMessageRefs(t *testing.T) {
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := storetest.Open(t, url(t))
			ctx := context.Background()
			for _, r := range []store.MessageRef{
				{Platform: "slack", Ref: "approval:L-7", Recipient: "olga@borealis.example", Channel: "D7", MessageID: "7.1"},
				{Platform: "discord", Ref: "approval:L-7", Recipient: "olga@borealis.example", Channel: "70", MessageID: "71"},
				{Platform: "slack", Ref: "approval:L-7", Recipient: "pete@borealis.example", Channel: "D8", MessageID: "7.2"},
				{Platform: "slack", Ref: "approval:L-8", Recipient: "olga@borealis.example", Channel: "D7", MessageID: "8.1"},
			} {
				if err := db.SaveMessageRef(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			if err := db.RetireMessageRefs(ctx, "approval:L-7", "olga@borealis.example"); err != nil {
				t.Fatal(err)
			}
			if who, err := db.MessageRefRecipients(ctx, "approval:L-7"); err != nil || len(who) != 1 || who[0] != "pete@borealis.example" {
				t.Errorf("recipients of approval:L-7 after olga's copies were retired = %q, %v; want pete's alone", who, err)
			}
			if who, err := db.MessageRefRecipients(ctx, "approval:L-8"); err != nil || len(who) != 1 || who[0] != "olga@borealis.example" {
				t.Errorf("recipients of approval:L-8 = %q, %v; want olga's, not retired", who, err)
			}
			// A request whose every copy was retired was still posted; one never posted was not.
			if err := db.SaveMessageRef(ctx, store.MessageRef{Platform: "discord", Ref: "approval:L-10", Recipient: "pete@borealis.example", Channel: "80", MessageID: "81"}); err != nil {
				t.Fatal(err)
			}
			if err := db.RetireMessageRefs(ctx, "approval:L-10", "pete@borealis.example"); err != nil {
				t.Fatal(err)
			}
			if posted, err := db.MessageRefPosted(ctx, "approval:L-10"); err != nil || !posted {
				t.Errorf("approval:L-10, every copy retired, posted = %v, %v; want true", posted, err)
			}
			if posted, err := db.MessageRefPosted(ctx, "approval:L-9"); err != nil || posted {
				t.Errorf("approval:L-9, never posted, posted = %v, %v; want false", posted, err)
			}
			if got, _ := db.MessageRefs(ctx, "slack", "approval:L-7"); len(got) != 2 {
				t.Errorf("slack copies of approval:L-7 after retiring = %+v; want both still there to edit", got)
			}
			if err := db.SaveMessageRef(ctx, store.MessageRef{Platform: "slack", Ref: "approval:L-7", Recipient: "olga@borealis.example", Channel: "D7", MessageID: "7.9"}); err != nil {
				t.Fatal(err)
			}
			if who, _ := db.MessageRefRecipients(ctx, "approval:L-7"); len(who) != 2 {
				t.Errorf("recipients of approval:L-7 after a new copy to olga = %q; want olga and pete", who)
			}
		})
	}
}
