package schedule_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/schedule"
)

var chicago, santiago, lordHowe = zone("America/Chicago"), zone("America/Santiago"), zone("Australia/Lord_Howe")

func zone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

func TestParseWeekly(t *testing.T) {
	for in, want := range map[string]string{
		"MON 09:00":    "Mon 09:00",
		"monday 9:00":  "Mon 09:00",
		"Sun 23:59":    "Sun 23:59",
		" fri  17:30 ": "Fri 17:30",
	} {
		w, err := schedule.ParseWeekly(in, chicago)
		if err != nil {
			t.Errorf("ParseWeekly(%q): %v", in, err)
			continue
		}
		if got := w.String(); got != want+" America/Chicago" {
			t.Errorf("ParseWeekly(%q) = %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{"MON 9", "MON 24:00", "MON 09:60", "MONXYZ 09:00", "MO 09:00", "MON 09:00pm", "every monday", "09:00 MON", "MON 09:00 UTC", "", "MON 9:5"} {
		_, err := schedule.ParseWeekly(in, chicago)
		if err == nil || !strings.Contains(err.Error(), `write e.g. "`) {
			t.Errorf("ParseWeekly(%q) = %v, want a refusal with an example", in, err)
			continue
		}
		_, ex, _ := strings.Cut(err.Error(), `write e.g. "`)
		ex, _, _ = strings.Cut(ex, `"`)
		if _, err := schedule.ParseWeekly(ex, chicago); err != nil {
			t.Errorf("ParseWeekly(%q): its example %q is refused: %v", in, ex, err)
		}
	}
}

// A schedule line the policy cannot parse makes the policy refuse to load, with its line: the
// service never starts on it and `policy check` names it.
func TestPolicyRefusesAScheduleItCannotRead(t *testing.T) {
	src := strings.Replace(string(docs.ExamplePolicy), `schedule: "MON 09:00"`, `schedule: "every monday at 9"`, 1)
	_, err := policy.Load([]byte(src), "quartermaster.yaml")
	if err == nil {
		t.Fatal("a policy with schedule \"every monday at 9\" loaded")
	}
	line := 0
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, "every monday at 9") {
			line = i + 1
		}
	}
	want := `schedule "every monday at 9" is not a weekday and a 24-hour time; write e.g. "MON 09:00"`
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "quartermaster.yaml:"+strconv.Itoa(line)+":") {
		t.Errorf("error = %v, want line %d and %q", err, line, want)
	}
}

// Next and Last agree with gocron, whose timers run the jobs, across both daylight saving changes:
// the console moves its clock to Next, and the catch-up finds missed weeks with Last.
func TestWeeklyAgreesWithGocronAcrossDaylightSaving(t *testing.T) {
	cases := []struct {
		spec string
		from time.Time
		want time.Time
	}{
		// Where the clocks skip midnight (Chile: Saturday 24:00 becomes Sunday 01:00), 00:30 that
		// Sunday falls as much after the jump, on the Sunday, not on the Saturday evening before.
		{"SUN 00:30", time.Date(2026, 9, 1, 0, 0, 0, 0, santiago), time.Date(2026, 9, 6, 4, 30, 0, 0, time.UTC)},
		{"MON 09:00", time.Date(2026, 9, 1, 0, 0, 0, 0, santiago), time.Date(2026, 9, 7, 12, 0, 0, 0, time.UTC)},
		// Lord Howe Island moves its clocks by half an hour: 02:15 does not exist on 4 October
		// 2026 (02:00 becomes 02:30), and 01:45 happens twice on 5 April 2026.
		{"SUN 02:15", time.Date(2026, 9, 28, 0, 0, 0, 0, lordHowe), time.Date(2026, 10, 3, 15, 45, 0, 0, time.UTC)},
		{"SUN 01:45", time.Date(2026, 3, 30, 0, 0, 0, 0, lordHowe), time.Date(2026, 4, 4, 14, 45, 0, 0, time.UTC)},
		{"MON 09:00", time.Date(2026, 10, 27, 0, 0, 0, 0, chicago), time.Date(2026, 11, 2, 15, 0, 0, 0, time.UTC)},  // CST after fall back
		{"MON 09:00", time.Date(2026, 10, 20, 0, 0, 0, 0, chicago), time.Date(2026, 10, 26, 14, 0, 0, 0, time.UTC)}, // CDT
		{"MON 09:00", time.Date(2026, 3, 3, 0, 0, 0, 0, chicago), time.Date(2026, 3, 9, 14, 0, 0, 0, time.UTC)},     // CDT after spring forward
		{"SUN 02:30", time.Date(2026, 3, 2, 0, 0, 0, 0, chicago), time.Date(2026, 3, 8, 8, 30, 0, 0, time.UTC)},     // 02:30 does not exist: 03:30 CDT
		{"SUN 01:30", time.Date(2026, 10, 27, 0, 0, 0, 0, chicago), time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC)},  // 01:30 twice: the first
		{"MON 09:00", time.Date(2026, 11, 30, 9, 0, 0, 0, chicago), time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC)},  // at the instant: the next
	}
	for _, c := range cases {
		loc := c.from.Location()
		w, err := schedule.ParseWeekly(c.spec, loc)
		if err != nil {
			t.Fatal(err)
		}
		got := w.Next(c.from)
		if !got.Equal(c.want) {
			t.Errorf("%s after %s: Next = %s, want %s", c.spec, c.from, got.UTC(), c.want)
		}
		if last := w.Last(got); !last.Equal(got) {
			t.Errorf("%s: Last(%s) = %s, want the instant itself", c.spec, got, last)
		}
		if last := w.Last(got.Add(-time.Second)); !last.Before(c.from.Add(time.Second)) || !w.Next(last).Equal(got) {
			t.Errorf("%s: Last just before %s = %s, whose Next is not it", c.spec, got, last)
		}
		// The scheduler, started at c.from on a fake clock, arms its first run for the same instant.
		fc := clockwork.NewFakeClockAt(c.from)
		s, err := schedule.New(schedule.Options{Clock: fc, Location: loc})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Weekly("job", w, func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		s.Start()
		if err := fc.BlockUntilContext(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		next, err := s.NextRun("job")
		if err != nil {
			t.Fatal(err)
		}
		if !next.Equal(got) {
			t.Errorf("%s after %s: the scheduler runs at %s, Next says %s", c.spec, c.from, next.UTC(), got.UTC())
		}
		_ = s.Stop()
	}
}

// The scheduler runs a weekly job at 09:00 in the policy's time zone, week after week, through the
// change back to standard time: 14:00 UTC before it, 15:00 UTC after.
func TestWeeklyJobRunsAtLocalTimeThroughDaylightSaving(t *testing.T) {
	runWeeks(t, "MON 09:00", time.Date(2026, 10, 19, 12, 0, 0, 0, chicago), []time.Time{
		time.Date(2026, 10, 26, 14, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 2, 15, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 9, 15, 0, 0, 0, time.UTC),
	})
}

// Where the clocks skip a Sunday's midnight (Chile, on 6 September 2026), the weekly job still
// runs every Monday at 09:00: before the change, on the Monday after it and the one after that.
func TestWeeklyJobRunsOnWhereTheClocksSkipMidnight(t *testing.T) {
	runWeeks(t, "MON 09:00", time.Date(2026, 8, 25, 12, 0, 0, 0, santiago), []time.Time{
		time.Date(2026, 8, 31, 13, 0, 0, 0, time.UTC),
		time.Date(2026, 9, 7, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 9, 14, 12, 0, 0, 0, time.UTC),
	})
}

// Where the clocks skip Monday's midnight (Brazil, 6 October 1997: Sunday 24:00 became Monday
// 01:00), a job at MON 00:00 runs once that Monday, at the jump, and at 00:00 the Mondays after;
// where Monday's first hour happened twice (Israel, 24 September 2001), MON 00:30 runs once, at
// the first 00:30.
func TestWeeklyJobRunsOnceWhereMondaysMidnightChanges(t *testing.T) {
	runWeeks(t, "MON 00:00", time.Date(1997, 10, 2, 12, 0, 0, 0, zone("America/Sao_Paulo")), []time.Time{
		time.Date(1997, 10, 6, 3, 0, 0, 0, time.UTC),
		time.Date(1997, 10, 13, 2, 0, 0, 0, time.UTC),
	})
	runWeeks(t, "MON 00:30", time.Date(2001, 9, 20, 12, 0, 0, 0, zone("Asia/Jerusalem")), []time.Time{
		time.Date(2001, 9, 23, 21, 30, 0, 0, time.UTC),
		time.Date(2001, 9, 30, 22, 30, 0, 0, time.UTC),
	})
}

// runWeeks starts a scheduler at from with a weekly job at spec in from's time zone, lets the fake
// clock run to each run the scheduler arms, and checks the runs are want.
func runWeeks(t *testing.T, spec string, from time.Time, want []time.Time) {
	t.Helper()
	loc := from.Location()
	fc := clockwork.NewFakeClockAt(from)
	s, err := schedule.New(schedule.Options{Clock: fc, Location: loc})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := schedule.ParseWeekly(spec, loc)
	var mu sync.Mutex
	var runs []time.Time
	ran := make(chan struct{}, 10)
	if err := s.Weekly("showback", w, func(context.Context) error {
		mu.Lock()
		runs = append(runs, fc.Now())
		mu.Unlock()
		ran <- struct{}{}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer s.Stop()
	for i := range want {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		err := fc.BlockUntilContext(ctx, 1)
		cancel()
		if err != nil {
			t.Fatalf("run %d was never armed (want %v)", i+1, want)
		}
		next, err := s.NextRun("showback")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // the scheduler's goroutine finishes arming what it armed
		// A real clock is a little past a timer's instant when the timer fires; a fake one moved
		// exactly onto it lets gocron re-arm the job for that same instant, which no real run sees.
		fc.Advance(next.Sub(fc.Now()) + time.Millisecond)
		// A timer armed just after the clock moved (the scheduler re-arms from a goroutine of
		// its own) is due already: moving the clock by nothing fires it, as real time would.
		deadline := time.After(10 * time.Second)
		tick := time.NewTicker(50 * time.Millisecond)
	wait:
		for {
			select {
			case <-ran:
				break wait
			case <-tick.C:
				fc.Advance(0)
			case <-deadline:
				t.Fatalf("run %d did not happen at %s", i+1, next)
			}
		}
		tick.Stop()
		// Let the scheduler re-arm its timer for the next week before moving on.
		for j := 0; ; j++ {
			n, err := s.NextRun("showback")
			if err == nil && n.After(fc.Now()) {
				break
			}
			if j > 1000 {
				t.Fatalf("the job was not rescheduled after its run at %s (want %v)", fc.Now(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range want {
		if len(runs) != len(want) || !runs[i].Truncate(time.Minute).Equal(want[i]) {
			t.Fatalf("runs = %v, want %v", runs, want)
		}
	}
}

// A schedule line never panics the parser; one it accepts falls once a week, at its time of day.
func FuzzParseWeekly(f *testing.F) {
	for _, s := range []string{"MON 09:00", "sunday 2:30", "every monday", "MON 24:00", "FRI\t17:30", "MONDAYS 09:00"} {
		f.Add(s)
	}
	from := time.Date(2026, 3, 2, 0, 0, 0, 0, chicago)
	f.Fuzz(func(t *testing.T, s string) {
		w, err := schedule.ParseWeekly(s, chicago)
		if err != nil {
			return
		}
		at := from
		for range 3 {
			next := w.Next(at)
			if !next.After(at) || next.Sub(at) > 7*24*time.Hour+time.Hour || next.In(chicago).Weekday() != w.Day {
				t.Fatalf("%q: Next(%s) = %s", s, at, next)
			}
			if last := w.Last(next); !last.Equal(next) {
				t.Fatalf("%q: Last(%s) = %s", s, next, last)
			}
			at = next
		}
	})
}
