package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A week in progress is compared with the week before up to the same weekday and time of day on
// the policy's clocks. Where that time did not exist a week before (Cuba's clocks skipped Sunday
// 8 March 2026's midnight hour), the span ends as much after the jump, on the same Sunday, as a
// scheduled time does (00:30 is 01:30 CDT), not an hour early on the Saturday; where it happened
// twice (1 November's 00:00 to 01:00), at the first.
func TestSoFarComparesWithTheSameClockTimeAcrossAChange(t *testing.T) {
	p := oddPolicy(t, oddCase{zone: "America/Havana", currency: "KRW", price: "3333.33"})
	lease := func(id int, start, end string) *qm.Lease {
		s, e := rfc(t, start), rfc(t, end)
		return &qm.Lease{ID: qm.LeaseID(id), Kind: qm.KindWorkspace, User: "ana@odd.example", Team: "isla", Class: "gpu", GPUs: 2,
			Price: 3333.33, Priced: true, CreatedAt: s, StartedAt: s, ExpiresAt: e, EndedAt: e, State: qm.Expired, Because: "test"}
	}
	for _, c := range []struct {
		name, now, to, words string
		lease                *qm.Lease
		gpuHours, cost       float64
	}{
		{
			// 2 GPUs from Saturday 23:00 CST to Sunday 01:30 CDT: 1.5 real hours, 3 GPU-hours,
			// 9999.99 KRW, billed 10000.
			name: "skipped", now: "2026-03-15T00:30:00-04:00", to: "2026-03-08T01:30:00-04:00", words: "up to Sun 8 Mar 01:30 CDT",
			lease:    lease(1, "2026-03-07T23:00:00-05:00", "2026-03-08T02:00:00-04:00"),
			gpuHours: 3, cost: 10000,
		},
		{
			// 2 GPUs from Saturday 23:00 CDT to the first 00:30: 1.5 real hours.
			name: "twice", now: "2026-11-08T00:30:00-05:00", to: "2026-11-01T00:30:00-04:00", words: "up to Sun 1 Nov 00:30 CDT",
			lease:    lease(1, "2026-10-31T23:00:00-04:00", "2026-11-01T01:00:00-05:00"),
			gpuHours: 3, cost: 10000,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := rfc(t, c.now)
			w := showback.WeekOf(now, p.Location)
			r := showback.Build(showback.Input{Policy: p, Week: w, Now: now, Leases: []*qm.Lease{c.lease}})
			if want := rfc(t, c.to); !r.PreviousTo.Equal(want) {
				t.Errorf("%s so far at %s is compared up to %s, want %s", w, c.now, r.PreviousTo.In(p.Location).Format(time.RFC3339), c.to)
			}
			if r.Total.Previous.GPUHours != c.gpuHours || r.Total.Previous.Cost != c.cost {
				t.Errorf("the week before up to then: %v GPU-hours, %v KRW; want %v, %v", r.Total.Previous.GPUHours, r.Total.Previous.Cost, c.gpuHours, c.cost)
			}
			if text := r.Text(); !strings.Contains(text, c.words) {
				t.Errorf("the change does not say %q:\n%s", c.words, text)
			}
		})
	}
}
