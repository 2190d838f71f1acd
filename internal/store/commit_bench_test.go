package store_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// BenchmarkSyncCommitPostgres is the floor under every grant on PostgreSQL: one small INSERT in a
// transaction and its COMMIT, waiting for the disk (synchronous_commit=on), through the same pool
// and transaction code the lease service uses (three round trips: BEGIN, INSERT, COMMIT), from
// QM_BENCH_WORKERS clients at once (default 1). Run it as
// QM_BENCH_WORKERS=2 go test -run '^$' -bench SyncCommitPostgres -benchtime 2000x ./internal/store/
func BenchmarkSyncCommitPostgres(b *testing.B) {
	ctx := context.Background()
	url := strings.Replace(storetest.Postgres(b), "synchronous_commit=off", "synchronous_commit=on", 1)
	db, err := store.Connect(ctx, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := store.SQLX(db).ExecContext(ctx, "CREATE TABLE commit_floor (id BIGSERIAL PRIMARY KEY, at TIMESTAMPTZ, note TEXT)"); err != nil {
		b.Fatal(err)
	}
	workers := 1
	if v, err := strconv.Atoi(os.Getenv("QM_BENCH_WORKERS")); err == nil && v > 0 {
		workers = v
	}
	var next atomic.Int64
	lat := make([][]time.Duration, workers)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				err := db.Update(ctx, nil, func(tx qm.Tx) error {
					return store.ExecIn(ctx, tx, "INSERT INTO commit_floor (at, note) VALUES ($1, $2)", time.Now(), "floor")
				})
				lat[w] = append(lat[w], time.Since(t0))
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(all))/wall.Seconds(), "commits/s")
}
