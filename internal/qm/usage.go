package qm

import (
	"context"
	"time"
)

// UsageRollup is what one lease's GPUs did during one hour, as telemetry saw it: GPU-seconds
// observed, of which idle, and the utilization samples behind the mean. Rollups add up: two
// rollups of the same lease and hour are merged by summing every field.
type UsageRollup struct {
	Lease          LeaseID
	Hour           time.Time // the start of the hour in the policy's time zone (HourStart)
	GPUSeconds     float64
	IdleGPUSeconds float64
	UtilSum        float64 // the sum of the samples' mean utilization, percent
	Samples        int64
}

// MeanUtilization is the mean of the samples, percent; 0 without samples.
func (u UsageRollup) MeanUtilization() float64 {
	if u.Samples == 0 {
		return 0
	}
	return u.UtilSum / float64(u.Samples)
}

// UsageStore keeps hourly usage rollups per lease (the simulated cluster's and the node agent's
// telemetry write them; the showback reads them).
type UsageStore interface {
	// AddUsage merges rollups into the stored ones (summing fields of the same lease and hour).
	AddUsage(ctx context.Context, rs []UsageRollup) error
	// Usage lists the rollups whose hour starts in [from, to), ordered by lease and hour.
	Usage(ctx context.Context, from, to time.Time) ([]UsageRollup, error)
}

// HourStart is the start of the hour t falls in on the clocks of loc. Usage is rolled up by these
// hours, so that every rollup lies inside one week of the policy's time zone, also where the
// offset from UTC is not whole hours (India's +5:30, Nepal's +5:45, Newfoundland's -3:30).
func HourStart(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	_, off := t.In(loc).Zone()
	shift := time.Duration(off) * time.Second
	return t.Add(shift).Truncate(time.Hour).Add(-shift).UTC()
}

// HourSpan is the span of the hour that starts at h (an HourStart): the instants whose hour it is,
// which its rollups cover. It is an hour long, except where the clocks of loc change by less than
// an hour inside it: on Lord Howe Island, whose clocks jump from 02:00 to 02:30, the hour of 02:00
// after the jump begins at the jump (02:30), and where they go back from 02:00 to 01:30, the second
// hour of 01:00 begins at the change; each is half an hour long.
func HourSpan(h time.Time, loc *time.Location) (from, to time.Time) {
	if loc == nil {
		loc = time.UTC
	}
	from, to = h, h.Add(time.Hour)
	// The offset in effect at the hour's last instant began inside the hour, and the instants
	// before it are of another hour: the hour begins at the change.
	if s, _ := to.Add(-time.Nanosecond).In(loc).ZoneBounds(); s.After(from) && !HourStart(s.Add(-time.Nanosecond), loc).Equal(h) {
		from = s
	}
	// The offset in effect at its first instant ends inside it, and the instants after are of
	// another hour: the hour ends at the change.
	if _, e := from.In(loc).ZoneBounds(); !e.IsZero() && e.Before(to) && !HourStart(e, loc).Equal(h) {
		to = e
	}
	return from, to
}
