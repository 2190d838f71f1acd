package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/reports/showback"
)

// The showback benchmark's history: a year of leases of 50 teams and 1,000 people, with their hourly
// usage and predicted waits, ending with the week the report is made for.
const (
	benchTeams   = 50
	benchUsers   = 1000
	benchLeases  = 200_000
	benchSchema  = "qm_bench_showback"
	benchWeek    = "2026-W48"
	benchNowText = "2026-11-30T15:00:00Z"
)

// benchDir is where the benchmark keeps its SQLite file and its 50-team policy between runs
// (QM_BENCH_DIR, by default a directory under the system's temporary one); scripts/bench-reports.sh
// runs quartermaster report on them afterwards.
func benchDir(b *testing.B) string {
	d := os.Getenv("QM_BENCH_DIR")
	if d == "" {
		d = filepath.Join(os.TempDir(), "qm-bench-showback")
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		b.Fatal(err)
	}
	return d
}

// benchPolicy is the example policy with 50 teams of 20 people each.
func benchPolicy(b *testing.B, dir string) *policy.Policy {
	src := string(docs.ExamplePolicy)
	i := strings.Index(src, "\nteams:\n")
	j := strings.Index(src, "\n# A request that matches")
	var t strings.Builder
	t.WriteString("\nteams:\n")
	for n := 1; n <= benchTeams; n++ {
		fmt.Fprintf(&t, "  - name: team-%02d\n    idp_groups: [g-%02d]\n    budget_owners: [owner-%02d@acme.example]\n    channel: \"#team-%02d\"\n"+
			"    quota: {gpus: {interactive: 8, train: 32}, gpu_hours_per_week: 2000}\n    data_classes: [public]\n", n, n, n, n)
	}
	src = src[:i] + t.String() + src[j:]
	path := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	p, err := policy.LoadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// seedYear writes the year of history unless the database has it already.
func seedYear(b *testing.B, db *store.DB, loc *time.Location) {
	ctx := context.Background()
	x := store.SQLX(db)
	var n int
	if err := x.GetContext(ctx, &n, "SELECT COUNT(*) FROM leases"); err != nil {
		b.Fatal(err)
	}
	if n == benchLeases {
		return
	}
	if n != 0 {
		b.Fatalf("the benchmark database holds %d leases, neither none nor %d; remove it", n, benchLeases)
	}
	began := time.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2025, 12, 1, 0, 0, 0, 0, loc)
	year := time.Date(2026, 11, 30, 0, 0, 0, 0, loc).Sub(start)
	type row = []any
	var leases, usage, preds []row
	tm := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.UTC().Truncate(time.Microsecond)
	}
	// Leases are written as they were asked for, in time order, as the service writes them.
	created := make([]time.Time, benchLeases)
	for i := range created {
		created[i] = start.Add(time.Duration(rng.Int64N(int64(year))))
	}
	slices.SortFunc(created, func(a, b time.Time) int { return a.Compare(b) })
	for i := range benchLeases {
		id := int64(i + 1)
		team := rng.IntN(benchTeams)
		user := fmt.Sprintf("user-%04d@acme.example", team*benchUsers/benchTeams+rng.IntN(benchUsers/benchTeams))
		class, gpus := "interactive", 1
		if rng.Float64() < 0.3 {
			class, gpus = "train", []int{1, 2, 4, 8}[rng.IntN(4)]
		}
		kind, because := "", ""
		if i%1000 == 999 {
			kind, because, class, gpus = "quota", "deadline", "train", 8
		}
		created := created[i]
		dur := time.Duration(30+rng.IntN(450)) * time.Minute
		var rules, decidedBy string
		var decided, started, expires, ended time.Time
		var reclaimed float64
		state := "expired"
		queued := created
		if rng.Float64() < 0.05 || kind == "quota" {
			rules, decidedBy = "large-request", fmt.Sprintf("owner-%02d@acme.example", team+1)
			decided = created.Add(time.Duration(5+rng.IntN(115)) * time.Minute)
			queued = decided
			if rng.Float64() < 0.2 {
				state, ended = "denied", decided
			}
		}
		if state != "denied" {
			wait := time.Duration(0)
			if rng.Float64() < 0.2 {
				wait = time.Duration(rng.IntN(120)) * time.Minute
			}
			started = queued.Add(wait)
			expires = started.Add(dur)
			switch r := rng.Float64(); {
			case kind == "quota":
				state, ended = "expired", expires
			case r < 0.05:
				state, ended = "reclaimed", started.Add(dur/3)
				reclaimed = float64(gpus) * expires.Sub(ended).Hours()
			case r < 0.65:
				state, ended = "released", started.Add(time.Duration(rng.Int64N(int64(dur))))
			default:
				ended = expires
			}
			preds = append(preds, row{id, int64(wait), int64(wait * 2), tm(created)})
		}
		leases = append(leases, row{id, user, fmt.Sprintf("team-%02d", team+1), class, gpus, int64(dur), state, rules, decidedBy,
			tm(decided), tm(created), tm(started), tm(expires), tm(ended), reclaimed, kind, because})
		if kind == "" && !started.IsZero() {
			idle := rng.Float64() * 0.6
			for h := started.UTC().Truncate(time.Hour); h.Before(ended); h = h.Add(time.Hour) {
				a, z := maxT(h, started), minT(h.Add(time.Hour), ended)
				secs := z.Sub(a).Seconds() * float64(gpus)
				usage = append(usage, row{id, tm(h), secs, secs * idle, 60 * (1 - idle) * secs, int64(secs)})
			}
		}
	}
	insert(b, db, "leases", []string{"id", "user_name", "team", "class", "gpus", "duration_ns", "state", "rules", "decided_by",
		"decided_at", "created_at", "started_at", "expires_at", "ended_at", "reclaimed_gpu_hours", "kind", "because"}, leases)
	insert(b, db, "lease_usage_hourly", []string{"lease_id", "hour", "gpu_seconds", "idle_gpu_seconds", "util_sum", "samples"}, usage)
	insert(b, db, "lease_wait_predictions", []string{"lease_id", "median_ns", "p90_ns", "at"}, preds)
	if db.Dialect() == store.Postgres {
		if _, err := x.ExecContext(ctx, "ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("seeded %s: %d leases, %d usage rollups, %d predictions in %s", db.Dialect(), len(leases), len(usage), len(preds), time.Since(began).Round(time.Second))
}

func maxT(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minT(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// insert writes rows with multi-row INSERTs in one transaction.
func insert(b *testing.B, db *store.DB, table string, cols []string, rows [][]any) {
	ctx := context.Background()
	x := store.SQLX(db)
	tx, err := x.BeginTxx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	per := 30000 / len(cols)
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	for i := 0; i < len(rows); i += per {
		chunk := rows[i:min(i+per, len(rows))]
		q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES " + strings.TrimSuffix(strings.Repeat(one+", ", len(chunk)), ", ")
		args := make([]any, 0, len(chunk)*len(cols))
		for _, r := range chunk {
			args = append(args, r...)
		}
		if _, err := tx.ExecContext(ctx, x.Rebind(q), args...); err != nil {
			b.Fatalf("insert into %s: %v", table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// benchPostgresURL is the benchmark's schema in the test database, made if missing; it is kept
// between runs (seeding takes minutes).
func benchPostgresURL(b *testing.B) string {
	storetest.RequirePostgres(b)
	base := storetest.PostgresDSN()
	adm, err := sql.Open("postgres", base)
	if err != nil {
		b.Fatal(err)
	}
	defer adm.Close()
	if _, err := adm.Exec("CREATE SCHEMA IF NOT EXISTS " + benchSchema); err != nil {
		b.Fatal(err)
	}
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", benchSchema)
	u.RawQuery = q.Encode()
	return u.String()
}

// heapPeak samples the live heap while it runs and reports the highest it saw.
type heapPeak struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func watchHeap() *heapPeak {
	h := &heapPeak{stop: make(chan struct{})}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			if v := liveHeap(); v > h.peak {
				h.peak = v
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *heapPeak) Stop() uint64 {
	close(h.stop)
	h.done.Wait()
	return h.peak
}

func benchmarkShowbackWeek(b *testing.B, dbURL string) {
	dir := benchDir(b)
	p := benchPolicy(b, dir)
	db, err := store.Open(context.Background(), dbURL, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	seedYear(b, db, p.Location)
	now, _ := time.Parse(time.RFC3339, benchNowText)
	svc := &showback.Service{Policy: p, Source: db, Clock: fixed(now)}
	w, err := showback.ParseWeek(benchWeek, showback.Week{})
	if err != nil {
		b.Fatal(err)
	}
	var peak uint64
	var r *showback.Report
	b.ReportAllocs()
	for b.Loop() {
		runtime.GC()
		base := liveHeap()
		h := watchHeap()
		r, err = svc.Report(context.Background(), w, showback.Filter{})
		if err != nil {
			b.Fatal(err)
		}
		if p := h.Stop(); p-min(p, base) > peak {
			peak = p - min(p, base)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(r.Total.Leases), "leases-in-week")
}

type fixed time.Time

func (f fixed) Now() time.Time { return time.Time(f) }

var _ qm.Clock = fixed{}

// BenchmarkShowbackWeekPostgres builds 2026-W48's report (and the week before, for the change)
// from a year of history on PostgreSQL: the queries and the computation, not the rendering.
func BenchmarkShowbackWeekPostgres(b *testing.B) { benchmarkShowbackWeek(b, benchPostgresURL(b)) }

// BenchmarkShowbackWeekSQLite is the same on a SQLite file.
func BenchmarkShowbackWeekSQLite(b *testing.B) {
	benchmarkShowbackWeek(b, "sqlite:"+filepath.Join(benchDir(b), "showback.db"))
}
