package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A week in progress is compared with the same span of the week before (Monday 00:00 to the same
// weekday and time), not with the whole of it, and says so: a team that used the same GPUs at
// the same times both weeks shows no change on Wednesday.
func TestAWeekSoFarIsComparedWithTheSameSpanOfTheWeekBefore(t *testing.T) {
	p := loadBerlin(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location)
	prevFrom := w.Prev().Start(p.Location)
	var leases []*qm.Lease
	// Every day of both weeks, 4 GPUs from 09:00 to 17:00 Berlin time.
	for i, base := range []time.Time{prevFrom, from} {
		for d := range 7 {
			s := base.AddDate(0, 0, d).Add(9 * time.Hour)
			leases = append(leases, &qm.Lease{ID: qm.LeaseID(100*i + d + 1), User: "jana@nordlicht.example", Team: "optik", Class: "a100", GPUs: 4, State: qm.Expired,
				CreatedAt: s, StartedAt: s, ExpiresAt: s.Add(8 * time.Hour), EndedAt: s.Add(8 * time.Hour)})
		}
	}
	// Wednesday 15:00, and 15:30, when telemetry has seen half of the hour so far.
	for _, c := range []struct {
		at    time.Duration
		hours float64
		when  string
	}{{15 * time.Hour, 22, "Wed 18 Nov 15:00 CET"}, {15*time.Hour + 30*time.Minute, 22.5, "Wed 18 Nov 15:30 CET"}} {
		sameSpan(t, p, w, leases, from.AddDate(0, 0, 2).Add(c.at), c.hours, c.when)
	}
	// A complete week is compared with the whole week before.
	var usage []qm.UsageRollup
	for _, l := range leases {
		for h := l.StartedAt; h.Before(l.EndedAt); h = h.Add(time.Hour) {
			usage = append(usage, qm.UsageRollup{Lease: l.ID, Hour: h, GPUSeconds: 4 * 3600, IdleGPUSeconds: 3600})
		}
	}
	full := showback.Build(showback.Input{Policy: p, Week: w, Now: from.AddDate(0, 0, 8), Leases: leases, Usage: usage})
	if !near(full.Total.Previous.GPUHours, 7*32) || !near(full.Total.Previous.Idle(), 7*8) || strings.Contains(full.ChangeLine(full.Total), "up to") {
		t.Errorf("a complete week: the week before %v GPU-hours, %v idle, want 224 and 56; line %q", full.Total.Previous.GPUHours, full.Total.Previous.Idle(), full.ChangeLine(full.Total))
	}
}

// sameSpan checks the report of w as of now, hours into the week of each day's 4 GPUs.
func sameSpan(t *testing.T, p *policy.Policy, w showback.Week, leases []*qm.Lease, now time.Time, hours float64, when string) {
	t.Helper()
	var usage []qm.UsageRollup
	for _, l := range leases {
		for h := l.StartedAt; h.Before(l.EndedAt) && h.Before(now); h = h.Add(time.Hour) {
			seen := min(time.Hour, now.Sub(h)).Seconds() // the hour in progress, as far as seen
			usage = append(usage, qm.UsageRollup{Lease: l.ID, Hour: h, GPUSeconds: 4 * seen, IdleGPUSeconds: seen})
		}
	}
	// Leases that had not begun by now are not in the database yet.
	var known []*qm.Lease
	for _, l := range leases {
		if l.CreatedAt.Before(now) {
			if l.EndedAt.After(now) {
				c := *l
				c.EndedAt, c.State = time.Time{}, qm.Active
				l = &c
			}
			known = append(known, l)
		}
	}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: now, Leases: known, Usage: usage})
	if r.Complete {
		t.Fatal("the week in progress is complete")
	}
	// Mon and Tue 8h each, Wed from 09:00 to now: hours × 4 GPUs, both weeks.
	for _, s := range []showback.Summary{r.Total, r.Teams[0].Summary} {
		if !near(s.GPUHours, 4*hours) || !near(s.Previous.GPUHours, 4*hours) || !near(s.Change.GPUHours, 0) {
			t.Errorf("as of %s: GPU-hours %v against %v the week before (change %v); want %v against the %v of the same span", when, s.GPUHours, s.Previous.GPUHours, s.Change.GPUHours, 4*hours, 4*hours)
		}
		if !near(s.Previous.Cost, s.Cost) || !near(s.Previous.Idle(), s.Idle()) || !near(s.Idle(), hours) {
			t.Errorf("as of %s: cost %v and idle %v against %v and %v the week before; want the same, idle %v", when, s.Cost, s.Idle(), s.Previous.Cost, s.Previous.Idle(), hours)
		}
	}
	if line := r.ChangeLine(r.Total); !strings.Contains(line, "against 2026-W47 up to "+when+" (") {
		t.Errorf("the change line does not name the span of the week before it compares with (up to %s): %q", when, line)
	}
}
