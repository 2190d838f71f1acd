package qm_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// The quota's week starts where the showback's does: at Monday's first instant on the policy's
// clocks, also where the clocks skip from Sunday 24:00 to Monday 01:00 (the week then starts at
// the jump, not on the Sunday before) or go back over Monday's first hour (the first 00:00), so a
// Sunday-evening lease is not counted in the next week's GPU-hours.
func TestTheQuotaWeekStartsAtItsMondaysFirstInstant(t *testing.T) {
	for _, c := range []struct{ zone, at, want string }{
		{"America/Sao_Paulo", "1997-10-08T12:00:00-02:00", "1997-10-06T01:00:00-02:00"},
		{"Asia/Jerusalem", "2001-09-26T12:00:00+02:00", "2001-09-24T00:00:00+03:00"},
		{"Australia/Lord_Howe", "2026-10-04T03:00:00+11:00", "2026-09-28T00:00:00+10:30"},
		{"Asia/Kathmandu", "2026-11-25T09:00:00+05:45", "2026-11-23T00:00:00+05:45"},
	} {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		at, _ := time.Parse(time.RFC3339, c.at)
		want, _ := time.Parse(time.RFC3339, c.want)
		svc := &qm.Service{Policy: &policy.Policy{Location: loc}}
		if got := svc.WeekStart(at); !got.Equal(want) {
			t.Errorf("%s: the week of %s starts at %s, want %s", c.zone, c.at, got.In(loc).Format(time.RFC3339), c.want)
		}
	}
}
