package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/schedule"
	"github.com/acme/quartermaster/reports/showback"
)

// A week starts at its Monday's first instant on the policy's clocks, also where the clocks
// change at midnight going into that Monday: where they skip from Sunday 24:00 to Monday 01:00
// the week starts at the jump (Monday 01:00), not an hour earlier on the Sunday; where Monday's
// first hour happens twice, at the first 00:00. The week before ends there, so no hour is in two
// weeks or in none, and the week holds 167 or 169 hours.
func TestAWeekStartsAtItsMondaysFirstInstant(t *testing.T) {
	for _, c := range []struct {
		zone  string
		week  showback.Week
		start string // RFC 3339, the first instant of the Monday
		hours float64
	}{
		// Brazil, 1997: the clocks went from Sunday 5 October 24:00 to Monday 6 October 01:00.
		{"America/Sao_Paulo", showback.Week{Year: 1997, Num: 41}, "1997-10-06T01:00:00-02:00", 167},
		{"America/Sao_Paulo", showback.Week{Year: 1997, Num: 40}, "1997-09-29T00:00:00-03:00", 168},
		// Israel, 2001: Monday 24 September 01:00 went back to 00:00.
		{"Asia/Jerusalem", showback.Week{Year: 2001, Num: 39}, "2001-09-24T00:00:00+03:00", 169},
		{"Asia/Jerusalem", showback.Week{Year: 2001, Num: 38}, "2001-09-17T00:00:00+03:00", 168},
		// Lord Howe Island: half an hour, on a Sunday at 02:00.
		{"Australia/Lord_Howe", showback.Week{Year: 2026, Num: 40}, "2026-09-28T00:00:00+10:30", 167.5},
		{"Australia/Lord_Howe", showback.Week{Year: 2026, Num: 14}, "2026-03-30T00:00:00+11:00", 168.5},
		// Cuba: the clocks skip Sunday 8 March 2026's midnight, inside the week.
		{"America/Havana", showback.Week{Year: 2026, Num: 10}, "2026-03-02T00:00:00-05:00", 167},
	} {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := time.Parse(time.RFC3339, c.start)
		from, to := c.week.Start(loc), c.week.End(loc)
		if !from.Equal(want) {
			t.Errorf("%s in %s starts at %s, want %s", c.week, c.zone, from.Format(time.RFC3339), c.start)
		}
		if h := to.Sub(from).Hours(); h != c.hours {
			t.Errorf("%s in %s has %v hours (%s to %s), want %v", c.week, c.zone, h, from.Format(time.RFC3339), to.Format(time.RFC3339), c.hours)
		}
		if !c.week.Prev().End(loc).Equal(from) {
			t.Errorf("%s in %s: the week before ends at %s, not where it starts", c.week, c.zone, c.week.Prev().End(loc).Format(time.RFC3339))
		}
		if got := showback.WeekOf(from, loc); got != c.week {
			t.Errorf("%s in %s: its first instant %s is in %s", c.week, c.zone, from.Format(time.RFC3339), got)
		}
	}
}

// A post scheduled for Monday 00:00 reports the week that just ended as complete, not "so far",
// also where that midnight happens twice (the post runs at the first) or is skipped (it runs at
// the jump).
func TestAMondayMidnightPostReportsACompleteWeek(t *testing.T) {
	for _, c := range []struct {
		zone string
		week showback.Week
	}{
		{"Asia/Jerusalem", showback.Week{Year: 2001, Num: 38}},
		{"America/Sao_Paulo", showback.Week{Year: 1997, Num: 40}},
		{"Australia/Lord_Howe", showback.Week{Year: 2026, Num: 40}},
	} {
		src := strings.NewReplacer("timezone: Australia/Adelaide", "timezone: "+c.zone, `"TUE 07:30"`, `"MON 00:00"`).Replace(adelaidePolicy)
		p, err := policy.Load([]byte(src), "p.yaml")
		if err != nil {
			t.Fatal(err)
		}
		sched, err := schedule.ParseWeekly(p.Reports.Showback.Schedule, p.Location)
		if err != nil {
			t.Fatal(err)
		}
		pub := &showback.Publisher{Schedule: sched, Reports: &showback.Service{Policy: p}}
		at := sched.Next(c.week.Start(p.Location))
		if got := pub.WeekFor(at); got != c.week {
			t.Errorf("%s: the post at %s reports %s, want %s", c.zone, at.In(p.Location).Format(time.RFC3339), got, c.week)
		}
		r := showback.Build(showback.Input{Policy: p, Week: c.week, Now: at})
		if !r.Complete {
			t.Errorf("%s: the post at %s reports %s as a week in progress (it ends at %s)", c.zone, at.In(p.Location).Format(time.RFC3339), c.week, r.To.Format(time.RFC3339))
		}
	}
}
