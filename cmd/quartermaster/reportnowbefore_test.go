package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A report asked as of a --now before the first lease has no week to report as of then: every
// week before the first lease has no history, and the first lease's week has not begun. The
// refusal says --now is the trouble, and its example, typed back, is a report (it once offered
// the first lease's week with the same --now, which was refused again). On the example policy
// and on another.
func TestReportAsOfBeforeTheFirstLeaseOffersAReport(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, policy, script string
	}{
		{"example", "", "alice@acme.example: /gpu request 1 interactive 2h\n:advance 3h\n"},
		{"borealis", filepath.Join("..", "..", "commands", "testdata", "other.yaml"), "rita@borealis.example: /gpu request 2 dev for 6h\n:advance 3h\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var pol []string
			if c.policy != "" {
				pol = []string{"--policy", c.policy}
			}
			first := time.Date(2026, 11, 4, 15, 0, 0, 0, time.UTC) // a Wednesday
			runConsoleAt(t, dir, first.Format(time.RFC3339), c.script, pol...)
			base := append([]string{"report", "--db", "sqlite:" + filepath.Join(dir, "quartermaster.db")}, pol...)
			before := first.AddDate(0, 0, -9).Format(time.RFC3339)
			for _, extra := range [][]string{
				{"--now", before},
				{"--now", before, "--week", "2026-W45"},
				{"--now", before, "--week", "2026-W44", "--format", "csv"},
			} {
				args := append(append([]string{}, base...), extra...)
				_, stderr, code := runCLI(args...)
				msg := strings.TrimSpace(stderr)
				if code != 2 || strings.Contains(msg, "\n") {
					t.Errorf("%q: exit %d, want one sentence (exit 2): %q", extra, code, msg)
					continue
				}
				if !strings.Contains(msg, "--now "+before) {
					t.Errorf("%q: %q does not say that --now %s is the trouble", extra, msg, before)
				}
				ex := exampleOf(msg)
				if len(ex) == 0 {
					t.Errorf("%q: %q gives no example", extra, msg)
					continue
				}
				if out, stderr, code := runCLI(ex...); code != 0 || strings.TrimSpace(out) == "" {
					t.Errorf("%q: %q\nits example %q, typed back, is refused: %s", extra, msg, ex, stderr)
				}
			}
		})
	}
}
