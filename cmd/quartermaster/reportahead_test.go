package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/shellword"
	"github.com/acme/quartermaster/reports/showback"
)

// exampleOf is the command line a refusal of quartermaster ends with, after "e.g. quartermaster",
// as the words a shell would pass; nil when it ends with none.
func exampleOf(refusal string) []string {
	i := strings.LastIndex(refusal, "e.g. quartermaster ")
	if i < 0 {
		return nil
	}
	return shellword.Split(strings.TrimSpace(refusal[i+len("e.g. quartermaster "):]))
}

// A database whose history runs past the real now (a console whose simulated clock was moved on
// past today, as the README shows) is reported as of its last recorded moment, as the console's
// clock goes on from it: the weeks of that history can be reported without --now, and every
// refusal's example, typed back, makes a report. Tried on the example policy and on another.
func TestReportOfAHistoryAheadOfNow(t *testing.T) {
	t.Parallel()
	// A Wednesday 09:00 UTC some four months from now: its week has begun in every zone.
	start := time.Now().UTC().AddDate(0, 4, 0).Truncate(24 * time.Hour)
	for start.Weekday() != time.Wednesday {
		start = start.Add(24 * time.Hour)
	}
	start = start.Add(9 * time.Hour)
	for _, c := range []struct {
		name, policy, script, team string
	}{
		{"example", "", "alice@acme.example: /gpu request 1 interactive 2h\n:advance 3h\n", "vision"},
		{"borealis", filepath.Join("..", "..", "commands", "testdata", "other.yaml"), "rita@borealis.example: /gpu request 2 dev for 6h\n:advance 3h\n", "robotics"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var pol []string
			loc, _ := time.LoadLocation("America/Chicago")
			if c.policy != "" {
				pol = []string{"--policy", c.policy}
				loc, _ = time.LoadLocation("Europe/Berlin")
			}
			runConsoleAt(t, dir, start.Format(time.RFC3339), c.script, pol...)
			base := append([]string{"report", "--db", "sqlite:" + filepath.Join(dir, "quartermaster.db")}, pol...)
			week := showback.WeekOf(start, loc)
			for _, extra := range [][]string{
				nil,
				{"--week", week.String()},
				{"--week", "this week", "--team", c.team},
				{"--week", week.Next().String()},
				{"--week", week.Prev().Prev().String()},
				{"--week", week.Next().String(), "--team", "nonesuch"},
				{"--week", "2020-W60"},
				{"--format", "csv", "--week", "last week"},
				// A flag mistake is answered before the report is made: its example too is a week
				// of this history.
				{"--week"},
				{"--format", "csv", "--now"},
			} {
				args := append(append([]string{}, base...), extra...)
				out, stderr, code := runCLI(args...)
				if code == 0 {
					if strings.TrimSpace(out) == "" {
						t.Errorf("%q: exit 0 but no report", extra)
					}
					continue
				}
				msg := strings.TrimSpace(stderr)
				if code != 2 || strings.Contains(msg, "\n") {
					t.Errorf("%q: exit %d, want a report or one sentence (exit 2): %q", extra, code, msg)
					continue
				}
				ex := exampleOf(msg)
				if len(ex) == 0 {
					t.Errorf("%q: %q gives no example", extra, msg)
					continue
				}
				if _, stderr, code := runCLI(ex...); code != 0 {
					t.Errorf("%q: %q\nits example %q, typed back, is refused: %s", extra, msg, ex, stderr)
				}
			}
			// The week of the history itself is reported as it stands at its last recorded moment.
			out, stderr, code := runCLI(append(base, "--week", week.String())...)
			if code != 0 || !strings.Contains(out, week.String()) {
				t.Errorf("--week %s, the week the console ran in: exit %d, %s%s", week, code, stderr, out)
			}
		})
	}
}

// A fresh database whose history began in the week in progress has no complete week to report:
// report without --week is refused with an example that names the week in progress, and that
// example, typed back, is a report (it was the command as typed, refused again).
func TestReportWithoutAWeekOnAHistoryOfThisWeek(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Now().UTC().Truncate(time.Minute)
	runConsoleAt(t, dir, now.Format(time.RFC3339), "alice@acme.example: /gpu request 1 interactive 2h\n")
	db := "sqlite:" + filepath.Join(dir, "quartermaster.db")
	out, stderr, code := runCLI("report", "--db", db, "--format", "csv")
	if code == 0 {
		return // the history began last week (the console ran on Monday before the policy's midnight)
	}
	ex := exampleOf(stderr)
	if code != 2 || len(ex) == 0 || !strings.Contains(strings.Join(ex, " "), "--week") {
		t.Fatalf("report on a history of this week: exit %d, %q%s; want a refusal whose example names a week", code, stderr, out)
	}
	if _, stderr, code := runCLI(ex...); code != 0 {
		t.Errorf("the example %q, typed back, is refused: %s", ex, stderr)
	}
}
