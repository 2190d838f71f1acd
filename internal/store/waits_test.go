package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestWaitRecords runs on both databases: records come back in the order added, only those made
// since the given moment, and pruning forgets the old ones.
func TestWaitRecords(t *testing.T) {
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := storetest.Open(t, url(t))
			ctx := context.Background()
			t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
			for i, r := range []struct {
				class string
				at    time.Time
			}{{"train", t0}, {"interactive", t0.Add(time.Hour)}, {"train", t0.Add(2 * time.Hour)}, {"train", t0.Add(time.Minute)}} {
				if err := db.AddWaitRecord(ctx, r.class, r.at, []byte{'a' + byte(i)}); err != nil {
					t.Fatal(err)
				}
			}
			read := func(since time.Time) (got []string) {
				t.Helper()
				if err := db.WaitRecords(ctx, since, func(class string, rec []byte) error {
					got = append(got, class+":"+string(rec))
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				return got
			}
			if got := read(t0.Add(time.Minute)); len(got) != 3 || got[0] != "interactive:b" || got[1] != "train:c" || got[2] != "train:d" {
				t.Fatalf("records since t0+1m: %q", got)
			}
			stop := errors.New("stop")
			if err := db.WaitRecords(ctx, t0, func(string, []byte) error { return stop }); !errors.Is(err, stop) {
				t.Fatalf("an error from each: %v", err)
			}
			if n, err := db.PruneWaitRecords(ctx, t0.Add(30*time.Minute)); err != nil || n != 2 {
				t.Fatalf("pruned %d, %v; want 2", n, err)
			}
			if got := read(time.Time{}); len(got) != 2 || got[0] != "interactive:b" {
				t.Fatalf("after pruning: %q", got)
			}
		})
	}
}
