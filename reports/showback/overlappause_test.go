package showback_test

import (
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/reports/showback"
)

// Two replicas whose clocks are a few seconds apart can record a requeue of a lease as beginning
// before the requeue before it ended (the second replica saw the job back in its queue at its own
// now). Each second of the overlap is a second the lease held no GPU, once: a week that begins in
// it charges the lease nothing, not less than nothing, and the lease's weeks still add up to the
// bill chat gives for it, from SQLite and PostgreSQL alike.
func TestOverlappingRequeuesChargeNoWeekLessThanNothing(t *testing.T) {
	c := oddCases[0] // Lord Howe Island, JPY
	c.price = "98765.43"
	p := oddPolicy(t, c)
	loc := p.Location
	week, _ := showback.ParseWeek("2026-W41", showback.Week{})
	ws := week.Start(loc)
	start := ws.Add(-30 * time.Hour)
	end := ws.Add(1500 * time.Millisecond)
	lease := func() *qm.Lease {
		return &qm.Lease{ID: 1, Kind: qm.KindWorkspace, User: "ana@odd.example", Team: "isla", Class: "gpu", GPUs: 8,
			Price: p.Classes[0].PricePerGPUHour, Priced: true, CreatedAt: start, StartedAt: start, ExpiresAt: start.Add(48 * time.Hour),
			EndedAt: end, State: qm.Released, Because: "test",
			Pauses: []qm.Pause{
				{Kind: qm.PauseRequeued, From: ws.Add(-time.Hour), To: ws.Add(1200 * time.Millisecond)},
				{Kind: qm.PauseRequeued, From: ws.Add(-1800 * time.Millisecond), To: end},
			}}
	}
	// Held: from its start to an hour before the week's start, 29 hours of 8 GPUs; nothing after.
	held := 29 * time.Hour
	bill := policy.RoundRat(new(big.Rat).Mul(policy.Decimal(98765.43), big.NewRat(int64(8*held), int64(time.Hour))), 0)
	now := ws.Add(8 * 24 * time.Hour)
	check := func(t *testing.T, reports map[showback.Week]*showback.Report) {
		t.Helper()
		var sum float64
		for w, r := range reports {
			for _, row := range r.Rows {
				if row.Cost < 0 || row.GPUHours < 0 {
					t.Errorf("%s: row %s/%s shows %s GPU-hours and %s", w, row.Team, row.Class, qm.FormatHours(row.GPUHours), r.Money(row.Cost))
				}
				sum += row.Cost
			}
			dm := r.OwnerDM("owner@odd.example", []string{"isla"})
			for _, s := range dm.Sections {
				if strings.Contains(s.Text, ", -") {
					t.Errorf("%s: the budget owner's DM shows a negative figure:\n%s", w, s.Text)
				}
			}
		}
		if got := reports[week]; got.Total.Cost != 0 || got.Total.GPUHours != 0 {
			t.Errorf("%s: the lease held nothing in the week; it is charged %s for %v GPU-hours", week, got.Money(got.Total.Cost), got.Total.GPUHours)
		}
		if sum != bill {
			t.Errorf("the weeks add up to %v JPY; the lease's bill for %v of 8 GPUs is %v JPY", sum, held, bill)
		}
	}
	t.Run("build", func(t *testing.T) {
		reports := map[showback.Week]*showback.Report{}
		for _, w := range []showback.Week{week.Prev(), week} {
			reports[w] = showback.Build(showback.Input{Policy: p, Week: w, Now: now, Leases: []*qm.Lease{lease()}})
		}
		check(t, reports)
	})
	for _, b := range []struct {
		name string
		url  func(testing.TB) string
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		t.Run(b.name, func(t *testing.T) {
			db := storetest.Open(t, b.url(t))
			if err := db.Update(t.Context(), nil, func(tx qm.Tx) error { return tx.CreateLease(t.Context(), lease()) }); err != nil {
				t.Fatal(err)
			}
			svc := &showback.Service{Policy: p, Source: db, Clock: fixedClock(now)}
			reports := map[showback.Week]*showback.Report{}
			for _, w := range []showback.Week{week.Prev(), week} {
				r, err := svc.Report(t.Context(), w, showback.Filter{})
				if err != nil {
					t.Fatal(err)
				}
				reports[w] = r
			}
			check(t, reports)
		})
	}
}
