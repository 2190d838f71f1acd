package qm_test

import (
	"context"
	"fmt"
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
	"github.com/acme/quartermaster/internal/waits"
)

// benchGrants measures request-to-grant latency in a steady state: 20 teams, 200 leases already
// running, and 8 workers that each request a lease (timed) and release it again (not timed).
func benchGrants(b *testing.B, url string) { benchGrantsWith(b, url, false) }

// benchGrantsWith is benchGrants, with the wait predictor the service runs with in production
// when withWaits: every grant then also reads the class's queue and predicts the lease's wait.
func benchGrantsWith(b *testing.B, url string, withWaits bool) {
	ctx := context.Background()
	st, err := store.Open(ctx, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	bigCluster := "    - {name: big, count: 200, class: train, gpus: 8, nvlink_islands: 2}\n"
	p := manyTeamsPolicy(b, 20, bigCluster)
	for _, t := range p.Teams {
		t.Quota.GPUs["train"] = 1000
	}
	svc := newService(b, p, st)
	if withWaits {
		svc.Waits = waits.New()
	}
	for i := 0; i < 200; i++ {
		if _, err := svc.Request(ctx, qm.LeaseRequest{User: fmt.Sprintf("u%02d@x.example", i%20), GPUs: 1, Class: "train", Duration: 8 * time.Hour}); err != nil {
			b.Fatal(err)
		}
	}
	workers := 8
	if v, err := strconv.Atoi(os.Getenv("QM_BENCH_WORKERS")); err == nil && v > 0 {
		workers = v
	}
	var next atomic.Int64
	lat := make([][]time.Duration, workers)
	var wg sync.WaitGroup
	b.ResetTimer()
	t0 := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				user := fmt.Sprintf("u%02d@x.example", i%20)
				s := time.Now()
				out, err := svc.Request(ctx, qm.LeaseRequest{User: user, GPUs: 1 + int(i%4), Class: "train", Duration: time.Hour})
				lat[w] = append(lat[w], time.Since(s))
				if err != nil || out.Lease.State != qm.Active {
					b.Errorf("request %d: %v %v", i, err, out)
					return
				}
				if _, err := svc.Release(ctx, user, out.Lease.ID); err != nil {
					b.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	wall := time.Since(t0)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	var busy time.Duration
	for _, d := range all {
		busy += d
	}
	b.ReportMetric(float64(len(all))/wall.Seconds(), "cycles/s")
	b.ReportMetric(float64(len(all))/busy.Seconds()*float64(workers), "grants/s")
}

func BenchmarkGrantSQLite(b *testing.B) { benchGrants(b, storetest.SQLite(b)) }

// BenchmarkGrantSQLiteWithWaits is BenchmarkGrantSQLite with the wait predictor.
func BenchmarkGrantSQLiteWithWaits(b *testing.B) { benchGrantsWith(b, storetest.SQLite(b), true) }

// BenchmarkGrantPostgres waits for each commit to reach the disk, as production does (the test
// schemas turn that off for speed).
func BenchmarkGrantPostgres(b *testing.B) {
	benchGrants(b, strings.Replace(storetest.Postgres(b), "synchronous_commit=off", "synchronous_commit="+syncCommit(), 1))
}

// syncCommit is "on" unless QM_BENCH_SYNC_COMMIT says otherwise (to see what the disk costs).
func syncCommit() string {
	if v := os.Getenv("QM_BENCH_SYNC_COMMIT"); v != "" {
		return v
	}
	return "on"
}
