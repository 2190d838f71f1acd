package showback_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// meterUsage writes a lease's telemetry as the simulated cluster and the node agent do: by the
// hours of the policy's clocks (qm.HourStart), from from to to, every GPU idle.
func meterUsage(l *qm.Lease, from, to time.Time, loc *time.Location) []qm.UsageRollup {
	byHour := map[time.Time]*qm.UsageRollup{}
	var order []time.Time
	for at := from; at.Before(to); {
		next := qm.HourStart(at, loc).Add(time.Hour)
		if next.After(to) {
			next = to
		}
		h := qm.HourStart(at, loc)
		if byHour[h] == nil {
			byHour[h] = &qm.UsageRollup{Lease: l.ID, Hour: h}
			order = append(order, h)
		}
		secs := next.Sub(at).Seconds() * float64(l.GPUs)
		byHour[h].GPUSeconds += secs
		byHour[h].IdleGPUSeconds += secs
		byHour[h].Samples++
		at = next
	}
	out := make([]qm.UsageRollup, 0, len(order))
	for _, h := range order {
		out = append(out, *byHour[h])
	}
	return out
}

// On Lord Howe Island the clocks jump from 02:00 to 02:30 on Sunday 4 October 2026, so the hour
// 02:00–03:00 of that morning is half an hour long, and its telemetry covers only that half hour.
// A report made inside that hour, and a week in progress compared with the same span of that week,
// count the telemetry of that hour for the part of the half hour up to the instant, never more
// GPU-hours observed (nor idle) than the lease's GPUs held.
func TestTelemetryOfTheHalfHourAfterLordHowesJumpIsNotOvercounted(t *testing.T) {
	p := oddPolicy(t, oddCase{zone: "Australia/Lord_Howe", currency: "BHD", price: "2.1255"})
	loc := p.Location
	start := rfc(t, "2026-09-28T00:00:00+10:30")
	l := &qm.Lease{ID: 1, Kind: qm.KindWorkspace, User: "ana@odd.example", Team: "isla", Class: "gpu", GPUs: 4,
		Price: p.Classes[0].PricePerGPUHour, Priced: true, CreatedAt: start, StartedAt: start,
		ExpiresAt: rfc(t, "2026-10-14T00:00:00+11:00"), State: qm.Active, Because: "test"}
	for _, c := range []struct {
		name, week, now string
		telemetryTo     string // telemetry as read later: the whole hour the report is made in
		current, before float64
	}{
		// Sunday 4 October 02:45 (+11): 146.25 hours of the week, 15 minutes of them after the jump.
		{"W40 so far, inside the half hour", "2026-W40", "2026-10-04T02:45:00+11:00", "2026-10-04T03:00:00+11:00", 4 * 146.25, 0},
		// Sunday 11 October 02:15 (+11), compared with W40 up to Sunday 4 October 02:45 (+11).
		{"W41 so far, against the span of W40", "2026-W41", "2026-10-11T02:15:00+11:00", "2026-10-11T02:15:00+11:00", 4 * 146.25, 4 * 146.25},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, _ := showback.ParseWeek(c.week, showback.Week{})
			usage := meterUsage(l, start, rfc(t, c.telemetryTo), loc)
			r := showback.Build(showback.Input{Policy: p, Week: w, Now: rfc(t, c.now), Leases: []*qm.Lease{l}, Usage: usage})
			s := r.Total
			if !near(s.GPUHours, c.current) || s.ObservedGPUHours > s.GPUHours || !near(s.Idle(), c.current) {
				t.Errorf("the week: %v GPU-hours, %v observed, %v idle; want %v of each (every GPU idle, all of it seen)", s.GPUHours, s.ObservedGPUHours, s.Idle(), c.current)
			}
			if c.before > 0 {
				b := s.Previous
				if !near(b.GPUHours, c.before) || b.ObservedGPUHours > b.GPUHours || !near(b.Idle(), c.before) {
					t.Errorf("the week before, up to %v: %v GPU-hours, %v observed, %v idle; want %v of each (every GPU idle, all of it seen)",
						r.PreviousTo.In(loc), b.GPUHours, b.ObservedGPUHours, b.Idle(), c.before)
				}
			}
		})
	}
}
