package qm_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// Usage hours start on the policy's clocks, whatever the zone's offset from UTC.
func TestHourStartIsOnThePolicysClocks(t *testing.T) {
	for _, c := range []struct {
		zone, at, want string // want: the wall clock the hour starts at
	}{
		{"Asia/Kolkata", "2026-11-22T18:10:00Z", "2026-11-22 23:00"},
		{"Asia/Kathmandu", "2026-11-22T18:10:00Z", "2026-11-22 23:00"},
		{"America/St_Johns", "2026-11-22T18:10:00Z", "2026-11-22 14:00"},
		{"America/Chicago", "2026-11-01T06:30:00Z", "2026-11-01 01:00"}, // the second 01:00, after the clocks fell back
		{"UTC", "2026-11-22T18:10:00Z", "2026-11-22 18:00"},
	} {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		at, _ := time.Parse(time.RFC3339, c.at)
		got := qm.HourStart(at, loc)
		if w := got.In(loc).Format("2006-01-02 15:04"); w != c.want || got.After(at) || at.Sub(got) >= time.Hour {
			t.Errorf("%s: the hour of %s starts at %s (%s), want %s", c.zone, c.at, w, got, c.want)
		}
	}
}
