package showback_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/reports/showback"
)

// oddLease is a lease as a person describes it: wall-clock times in the policy's zone, with the
// offset the clock showed then.
type oddLease struct {
	gpus       int
	start, end string // RFC 3339; end empty: still running at the report, expiring at expires
	expires    string
	denied     bool
}

// oddCase is a week with a clock change, or on a clock off the hour, in a currency of zero or three
// decimals, and what a person works out by hand for its one team: the GPU-hours and, in the
// currency's minor unit, the cost.
type oddCase struct {
	zone, currency, price string
	week                  showback.Week
	now                   string
	hours                 float64 // the week's length
	leases                []oddLease
	gpuHours              float64
	minor                 int64 // the cost in minor units (yen, fils, millimes, krónur)
	shown                 string
}

// The hand computations, each lease billed as chat bills it (price × GPUs × real hours, rounded
// half away from zero to the currency's minor unit) and a lease across the week's start billed its
// bill up to the week's end less its bill up to the week's start:
var oddCases = []oddCase{
	{
		// Lord Howe Island: 02:00 becomes 02:30 on Sunday 4 October; the week has 167.5 hours.
		zone: "Australia/Lord_Howe", currency: "JPY", price: "4321.5", week: showback.Week{Year: 2026, Num: 40},
		now: "2026-10-05T09:00:00+11:00", hours: 167.5,
		leases: []oddLease{
			// 01:00 to 04:00 on the clock across the change: 2.5 real hours, 10803.75, billed 10804.
			{gpus: 1, start: "2026-10-04T01:00:00+10:30", end: "2026-10-04T04:00:00+11:00"},
			// Across the week's start: 2 GPUs for 6h, a bill of 51858; 34572 of it (4h) before.
			{gpus: 2, start: "2026-09-27T20:00:00+10:30", end: "2026-09-28T02:00:00+10:30"},
			// Still running: Saturday 22:00 to Monday 00:00 is 25.5 real hours; 3 GPUs, 76.5
			// GPU-hours, 330594.75, billed 330595.
			{gpus: 3, start: "2026-10-03T22:00:00+10:30", expires: "2026-10-06T22:00:00+11:00"},
			{gpus: 8, start: "2026-10-01T10:00:00+10:30", denied: true},
		},
		gpuHours: 2.5 + 4 + 76.5, minor: 10804 + (51858 - 34572) + 330595, shown: "358685 JPY",
	},
	{
		// Lord Howe Island: 02:00 goes back to 01:30 on Sunday 5 April; the week has 168.5 hours.
		zone: "Australia/Lord_Howe", currency: "JPY", price: "4321.5", week: showback.Week{Year: 2026, Num: 14},
		now: "2026-04-06T09:00:00+10:30", hours: 168.5,
		leases: []oddLease{
			// 00:00 to 04:00 on the clock across the change: 4.5 real hours; 2 GPUs, 9 GPU-hours,
			// 38893.5, billed 38894.
			{gpus: 2, start: "2026-04-05T00:00:00+11:00", end: "2026-04-05T04:00:00+10:30"},
		},
		gpuHours: 9, minor: 38894, shown: "38894 JPY",
	},
	{
		// Cuba: 01:00 goes back to 00:00 on Sunday 1 November; the week has 169 hours.
		zone: "America/Havana", currency: "KRW", price: "3333.33", week: showback.Week{Year: 2026, Num: 44},
		now: "2026-11-02T09:00:00-05:00", hours: 169,
		leases: []oddLease{
			// Saturday 23:00 to Sunday 02:00 on the clock: 4 real hours, 13333.32, billed 13333.
			{gpus: 1, start: "2026-10-31T23:00:00-04:00", end: "2026-11-01T02:00:00-05:00"},
		},
		gpuHours: 4, minor: 13333, shown: "13333 KRW",
	},
	{
		// Chile: Saturday 5 September 24:00 becomes Sunday 01:00; the week has 167 hours.
		zone: "America/Santiago", currency: "ISK", price: "333.3", week: showback.Week{Year: 2026, Num: 36},
		now: "2026-09-07T09:00:00-03:00", hours: 167,
		leases: []oddLease{
			// 23:00 to 02:00 across the skipped midnight: 2 real hours, 666.6, billed 667.
			{gpus: 1, start: "2026-09-05T23:00:00-04:00", end: "2026-09-06T02:00:00-03:00"},
			// Across the week's start: 5 GPUs for 2h, a bill of 3333; 1667 of it (1666.5, 1h) before.
			{gpus: 5, start: "2026-08-30T23:00:00-04:00", end: "2026-08-31T01:00:00-04:00"},
		},
		gpuHours: 2 + 5, minor: 667 + (3333 - 1667), shown: "2333 ISK",
	},
	{
		// Chatham Islands: 02:45 becomes 03:45 on Sunday 27 September; the week has 167 hours.
		zone: "Pacific/Chatham", currency: "KWD", price: "1.2345", week: showback.Week{Year: 2026, Num: 39},
		now: "2026-09-28T09:00:00+13:45", hours: 167,
		leases: []oddLease{
			// Across the week's start: 3 GPUs for 5h, 18.5175 billed 18.518; 7.407 of it (2h) before.
			{gpus: 3, start: "2026-09-20T22:00:00+12:45", end: "2026-09-21T03:00:00+12:45"},
			// 01:00 to 05:00 on the clock: 3 real hours, 3.7035, billed 3.704 (half a fils up).
			{gpus: 1, start: "2026-09-27T01:00:00+12:45", end: "2026-09-27T05:00:00+13:45"},
		},
		gpuHours: 9 + 3, minor: (18518 - 7407) + 3704, shown: "14.815 KWD",
	},
	{
		// Nepal, +5:45 all year: a week of 168 hours, starting at 18:15 UTC.
		zone: "Asia/Kathmandu", currency: "TND", price: "0.125", week: showback.Week{Year: 2026, Num: 48},
		now: "2026-11-30T09:00:00+05:45", hours: 168,
		leases: []oddLease{
			// Twice 7 GPUs for 10 minutes: 0.1458333 each, billed 0.146; 1.17 GPU-hours each.
			{gpus: 7, start: "2026-11-23T00:00:00+05:45", end: "2026-11-23T00:10:00+05:45"},
			{gpus: 7, start: "2026-11-29T23:50:00+05:45", end: "2026-11-30T00:00:00+05:45"},
			// Ends at the week's first instant: nothing of it in the week.
			{gpus: 4, start: "2026-11-22T20:00:00+05:45", end: "2026-11-23T00:00:00+05:45"},
		},
		gpuHours: 2.33, minor: 146 + 146, shown: "0.292 TND",
	},
}

func oddPolicy(t *testing.T, c oddCase) *policy.Policy {
	t.Helper()
	src := fmt.Sprintf(`organization: Odd Clocks
currency: %s
timezone: %s
classes:
  - name: gpu
    sku: H100
    gpu_memory_gib: 80
    price_per_gpu_hour: %s
    max_gpus: 8
    max_duration: 72h
teams:
  - name: isla
    idp_groups: [g-isla]
    budget_owners: [owner@odd.example]
    quota: {gpus: {gpu: 16}, gpu_hours_per_week: 1000}
reports:
  showback: {schedule: "MON 09:00", channel: "#showback", dm_budget_owners: true}
backend: sim
sim:
  nodes:
    - {name: g, count: 2, class: gpu, gpus: 8}
`, c.currency, c.zone, c.price)
	p, err := policy.Load([]byte(src), "odd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func rfc(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (c oddCase) build(t *testing.T, p *policy.Policy) []*qm.Lease {
	var out []*qm.Lease
	for i, o := range c.leases {
		start := rfc(t, o.start)
		l := &qm.Lease{ID: qm.LeaseID(i + 1), Kind: qm.KindWorkspace, User: "ana@odd.example", Team: "isla", Class: "gpu", GPUs: o.gpus,
			Price: p.Classes[0].PricePerGPUHour, Priced: true, CreatedAt: start, Because: "test"}
		switch {
		case o.denied:
			l.State, l.DecidedBy, l.DecidedAt, l.EndedAt = qm.Denied, "owner@odd.example", start.Add(time.Hour), start.Add(time.Hour)
		case o.end == "":
			l.State, l.StartedAt, l.ExpiresAt = qm.Active, start, rfc(t, o.expires)
		default:
			end := rfc(t, o.end)
			l.State, l.StartedAt, l.ExpiresAt, l.EndedAt = qm.Expired, start, end, end
		}
		out = append(out, l)
	}
	return out
}

// A week with a clock change, or on a clock off the hour, in a currency of zero or three decimals:
// its length, its team's GPU-hours and its cost are what a person works out by hand, from real
// hours (01:00 to 04:00 across a spring-forward of half an hour is 2.5 hours), and the same from
// SQLite and PostgreSQL.
func TestOddClocksAndCurrenciesAddUpByHand(t *testing.T) {
	for _, c := range oddCases {
		t.Run(c.zone+" "+c.week.String(), func(t *testing.T) {
			p := oddPolicy(t, c)
			now := rfc(t, c.now)
			check := func(t *testing.T, r *showback.Report) {
				t.Helper()
				if h := r.To.Sub(r.From).Hours(); h != c.hours {
					t.Errorf("the week has %v hours, want %v", h, c.hours)
				}
				var team *showback.Team
				for _, tm := range r.Teams {
					if tm.Name == "isla" {
						team = tm
					}
				}
				if team == nil {
					t.Fatalf("no team isla in the report:\n%s", r.Text())
				}
				scale := 1.0
				for range policy.MinorUnits(c.currency) {
					scale *= 10
				}
				if team.GPUHours != c.gpuHours || int64(team.Cost*scale+0.5) != c.minor || r.Total.Cost != team.Cost {
					t.Errorf("isla: %v GPU-hours, %v %s (total %v); by hand %v GPU-hours, %d minor units", team.GPUHours, team.Cost, c.currency, r.Total.Cost, c.gpuHours, c.minor)
				}
				if text := r.Text(); !strings.Contains(text, ", "+c.shown+";") {
					t.Errorf("the text does not show the cost %s:\n%s", c.shown, text)
				}
			}
			t.Run("build", func(t *testing.T) {
				check(t, showback.Build(showback.Input{Policy: p, Week: c.week, Now: now, Leases: c.build(t, p)}))
			})
			var texts []string
			for _, b := range []struct {
				name string
				url  func(testing.TB) string
			}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
				t.Run(b.name, func(t *testing.T) {
					db := storetest.Open(t, b.url(t))
					if err := db.Update(t.Context(), nil, func(tx qm.Tx) error {
						for _, l := range c.build(t, p) {
							if err := tx.CreateLease(t.Context(), l); err != nil {
								return err
							}
						}
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					svc := &showback.Service{Policy: p, Source: db, Clock: fixedClock(now)}
					r, err := svc.Report(t.Context(), c.week, showback.Filter{})
					if err != nil {
						t.Fatal(err)
					}
					check(t, r)
					texts = append(texts, r.Text()+string(r.CSV()))
				})
			}
			if len(texts) == 2 && texts[0] != texts[1] {
				t.Errorf("SQLite and PostgreSQL report the week differently:\n%s\n---\n%s", texts[0], texts[1])
			}
		})
	}
}
