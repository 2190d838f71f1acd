package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestInbox: a delivery is kept once per key; while its claim holds nobody else gets it; once
// the claim runs out exactly one of several callers claims it; finishing forgets it.
func TestInbox(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
		d := store.Delivery{Key: "slack:T1", Platform: "slack", Payload: `{"text":"/gpu request 1 interactive"}`, ReceivedAt: t0}
		other := store.Delivery{Key: "discord:9", Platform: "discord", Payload: "{}", ReceivedAt: t0}
		// One batch: the first of two with the same key is kept.
		if kept, err := db.AcceptDeliveries(ctx, []store.Delivery{d, other, d}, "host/1", time.Minute); err != nil || len(kept) != 3 || !kept[0] || !kept[1] || kept[2] {
			t.Fatalf("accept: %v %v", kept, err)
		}
		if kept, err := db.AcceptDeliveries(ctx, []store.Delivery{d}, "host/1", time.Minute); err != nil || kept[0] {
			t.Fatalf("a repeat was accepted again: %v %v", kept, err)
		}
		if got, err := db.ClaimDeliveries(ctx, "slack", "host/2", t0.Add(30*time.Second), time.Minute, 10); err != nil || len(got) != 0 {
			t.Fatalf("claimed while the first claim holds: %v %v", got, err)
		}
		// Five callers after the claim ran out: one gets it.
		var mu sync.Mutex
		var got []store.Delivery
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				ds, err := db.ClaimDeliveries(ctx, "slack", "host/2", t0.Add(2*time.Minute), time.Minute, 10)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				got = append(got, ds...)
				mu.Unlock()
			})
		}
		wg.Wait()
		if len(got) != 1 || got[0].Key != d.Key || got[0].Payload != d.Payload || !got[0].ReceivedAt.Equal(t0) || got[0].Platform != "slack" {
			t.Fatalf("claims after the claim ran out: %+v", got)
		}
		if again, _ := db.ClaimDeliveries(ctx, "slack", "host/3", t0.Add(2*time.Minute+time.Second), time.Minute, 10); len(again) != 0 {
			t.Fatalf("claimed twice: %+v", again)
		}
		// The claimer is known to have stopped: its claim is released, and the next caller
		// takes the delivery at once.
		at := t0.Add(2*time.Minute + 2*time.Second)
		if owners, err := db.DeliveryClaimers(ctx, "slack", at); err != nil || len(owners) != 1 || owners[0] != "host/2" {
			t.Fatalf("claimers: %v %v", owners, err)
		}
		if n, err := db.ReleaseDeliveryClaims(ctx, "slack", []string{"host/2"}); err != nil || n != 1 {
			t.Fatalf("released %d claims (%v), want 1", n, err)
		}
		if again, _ := db.ClaimDeliveries(ctx, "slack", "host/3", at, time.Minute, 10); len(again) != 1 {
			t.Fatalf("after the release: %+v", again)
		}
		if err := db.FinishDeliveries(ctx, []string{d.Key, "never-kept"}); err != nil {
			t.Fatal(err)
		}
		if left, _ := db.ClaimDeliveries(ctx, "slack", "host/3", t0.Add(time.Hour), time.Minute, 10); len(left) != 0 {
			t.Fatalf("a finished delivery was claimed: %+v", left)
		}
		if left, _ := db.ClaimDeliveries(ctx, "discord", "host/3", t0.Add(time.Hour), time.Minute, 10); len(left) != 1 {
			t.Fatalf("the other platform's delivery: %+v", left)
		}
	})
}
