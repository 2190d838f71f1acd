package qm_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// Every instant is in the span of its hour (qm.HourSpan of its qm.HourStart), and no instant is in
// the span of another hour: also on Lord Howe Island, whose clocks move by half an hour, so that
// telemetry rolled up by the hour is never read as covering time it does not cover.
func TestEveryInstantIsInTheSpanOfItsOwnHourOnly(t *testing.T) {
	for _, c := range []struct{ zone, from string }{
		{"Australia/Lord_Howe", "2026-10-03T22:00:00+10:30"}, // 02:00 becomes 02:30
		{"Australia/Lord_Howe", "2026-04-04T22:00:00+11:00"}, // 02:00 goes back to 01:30
		{"Europe/Berlin", "2026-03-29T00:00:00+01:00"},
		{"America/St_Johns", "2026-11-01T00:00:00-02:30"},
		{"Asia/Kathmandu", "2026-11-25T00:00:00+05:45"},
	} {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		start, err := time.Parse(time.RFC3339, c.from)
		if err != nil {
			t.Fatal(err)
		}
		spans := map[time.Time][2]time.Time{}
		for at := start; at.Before(start.Add(8 * time.Hour)); at = at.Add(5 * time.Minute) {
			h := qm.HourStart(at, loc)
			from, to := qm.HourSpan(h, loc)
			if at.Before(from) || !at.Before(to) {
				t.Errorf("%s: %s is in the hour of %s, whose span is %s to %s", c.zone, at.In(loc), h.In(loc), from.In(loc), to.In(loc))
			}
			spans[h] = [2]time.Time{from, to}
		}
		for h, s := range spans {
			for g, o := range spans {
				if h != g && s[0].Before(o[1]) && o[0].Before(s[1]) {
					t.Errorf("%s: the spans of the hours of %s and %s overlap", c.zone, h.In(loc), g.In(loc))
				}
			}
		}
	}
}
