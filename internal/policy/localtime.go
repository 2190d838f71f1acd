package policy

import "time"

// LocalTime is the instant a wall clock in loc reads the date and the time of day h:mi. A time the
// clocks skip that day (02:30 when they jump from 02:00 to 03:00, or 00:30 where they jump from
// midnight to 01:00) falls that much after the jump, at 03:30 (01:30), and a midnight they skip is
// the jump itself; a time that happens twice (when they fall back) is the first. time.Date leaves
// both to the zone's data: it may put a skipped midnight an hour before the jump, on the day
// before, and give either of a time that happens twice.
func LocalTime(y int, m time.Month, d, h, mi int, loc *time.Location) time.Time {
	want := time.Date(y, m, d, h, mi, 0, 0, time.UTC) // the wall clock asked for
	t := time.Date(y, m, d, h, mi, 0, 0, loc)
	if gap := want.Sub(wall(t)); gap > 0 {
		// time.Date read a skipped time on the clock after the jump, which puts it before
		// the jump (on the day before, where the jump is at midnight).
		return t.Add(gap)
	}
	// Clocks that fell back in the hours before t show its wall time twice: the first is the
	// offset's difference earlier. time.Date gives either, depending on the zone.
	_, now := t.Zone()
	if _, before := t.Add(-12 * time.Hour).Zone(); before > now {
		if first := t.Add(-time.Duration(before-now) * time.Second); wall(first).Equal(want) {
			return first
		}
	}
	return t
}

// wall is t's date and time of day on its own clock, as if in UTC.
func wall(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}
