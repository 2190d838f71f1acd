package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// borealisPolicy has other names than the example's: its showback is posted on Tuesdays at 08:00
// in Berlin, to #costs.
const borealisPolicy = `organization: Borealis Labs
currency: EUR
timezone: Europe/Berlin
classes:
  - name: notebook
    sku: A10
    price_per_gpu_hour: 0.5
    max_gpus: 1
    max_duration: 6h
    idle_timeout: 30m
    idle_grace: 10m
  - name: bigtrain
    sku: A100
    price_per_gpu_hour: 2
    max_gpus: 4
    max_duration: 48h
default_quota: {gpus: {notebook: 1, bigtrain: 0}, gpu_hours_per_week: 10}
teams:
  - name: ocean
    idp_groups: [g-ocean]
    budget_owners: [quinn@borealis.example]
    quota: {gpus: {notebook: 2, bigtrain: 8}, gpu_hours_per_week: 200}
    data_classes: [open]
exceptions:
  - name: bigger
    when: request.gpus > class.max_gpus
  - name: longer
    when: request.duration > class.max_duration
  - name: uncleared
    when: "!(request.data_class in team.data_classes)"
approvals:
  timeout: 12h
  fallback_approvers: [ops@borealis.example]
reports:
  showback: {schedule: "TUE 08:00", channel: "#costs", dm_budget_owners: true}
directory:
  - {user: pia@borealis.example, groups: [g-ocean]}
  - {user: quinn@borealis.example, groups: [g-ocean]}
  - {user: ops@borealis.example, groups: [platform]}
sim:
  nodes: [{name: a10, count: 1, class: notebook, gpus: 4}, {name: a100, count: 1, class: bigtrain, gpus: 8}]
`

// consoleOn runs a console script with args on the database db; it returns the exit code, what
// the console printed and what it wrote to standard error.
func consoleOn(t *testing.T, db, script string, args ...string) (int, string, string) {
	t.Helper()
	pol := filepath.Join(t.TempDir(), "borealis.yaml")
	if err := os.WriteFile(pol, []byte(borealisPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	all := append([]string{"console", "--policy", pol, "--db", db, "--reports", t.TempDir()}, args...)
	code := run(context.Background(), all, strings.NewReader(script), &out, &errb)
	return code, out.String(), errb.String()
}

// The simulated clock never goes back: a console started again on the same database, without
// --clock, goes on from where the last one's clock stood, whatever that one did (a lease that
// ended long before, a posted showback week, only moving the clock, only a report), and a --clock
// before it is refused. On SQLite and on PostgreSQL.
func TestConsoleClockGoesOnFromWhereItStopped(t *testing.T) {
	t.Parallel()
	dbs := map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "qm.db") },
		"postgres": func(t *testing.T) string { return storetest.Postgres(t) },
	}
	cases := []struct {
		name, clock, script string
		before, end, week   string // a --clock before the end, the end, and the week the next console starts in
	}{
		// Saturday 20 December 2031: a 2-hour lease, and a week on, past Tuesday's showback.
		{"a lease and a posted week", "2031-12-20T00:00:00Z", "pia@borealis.example: /gpu request 1 notebook 2h\n:advance 7d\n",
			"2031-12-26T00:00:00Z", "2031-12-27T00:00:00Z", "2031-W52"},
		{"only the clock moved", "2031-06-02T10:00:00Z", ":advance 3d\n",
			"2031-06-04T10:00:00Z", "2031-06-05T10:00:00Z", "2031-W23"},
		{"only a report", "2031-09-10T10:00:00Z", "quinn@borealis.example: /gpu report this week\n",
			"2031-09-10T09:00:00Z", "2031-09-10T10:00:00Z", "2031-W37"},
	}
	for name, open := range dbs {
		t.Run(name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					db := open(t)
					if code, _, errs := consoleOn(t, db, c.script, "--clock", c.clock); code != 0 {
						t.Fatalf("first console: exit %d: %s", code, errs)
					}
					want := "--clock " + c.before + " is before the last change the database records (" + c.end + "), and the simulated clock cannot go back; e.g. quartermaster console "
					if code, out, errs := consoleOn(t, db, "pia@borealis.example: /gpu list\n", "--clock", c.before); code != 2 || !strings.Contains(errs, want) || !strings.HasSuffix(strings.TrimSpace(errs), " --clock "+c.end) || out != "" {
						t.Errorf("a --clock before where the clock stood: exit %d, %q, output %q; want %q", code, errs, out, want)
					}
					code, out, errs := consoleOn(t, db, "quinn@borealis.example: /gpu report this week\n")
					if code != 0 || !strings.Contains(out, "GPU showback of team ocean, "+c.week) {
						t.Errorf("a console started without --clock: exit %d, %s%s; want the report of %s", code, out, errs, c.week)
					}
				})
			}
		})
	}
}

// As README.md's quick start says: a script that ran on a clock in the past goes on where it
// stopped in a console started with --clock at the time `:now` printed last, which posts no week
// it did not reach; a console started without --clock on that database starts at the real now,
// and posts the weeks it passed as missed (the latest of them, empty).
func TestAScriptGoesOnFromTheTimeNowPrinted(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	printedNow := func(out string) string {
		t.Helper()
		var last string
		for _, line := range strings.Split(out, "\n") {
			if at, ok := strings.CutPrefix(line, "→ console: "); ok {
				last = at
			}
		}
		if last == "" {
			t.Fatalf("`:now` printed nothing:\n%s", out)
		}
		return last
	}
	// Monday 2 March 2026, 09:00 in Berlin; the week's showback is posted on Tuesday 10 March.
	code, out, errs := consoleOn(t, db, "pia@borealis.example: /gpu request 1 notebook 2h\n:advance 3h\n:now\n", "--clock", "2026-03-02T09:00:00+01:00")
	if code != 0 {
		t.Fatalf("first console: exit %d: %s", code, errs)
	}
	at := printedNow(out)
	if at != "2026-03-02T12:00:00+01:00" {
		t.Fatalf("`:now` printed %s, want 2026-03-02T12:00:00+01:00", at)
	}
	code, out, errs = consoleOn(t, db, ":advance 1h\n:now\n", "--clock", at)
	if code != 0 {
		t.Fatalf("a console started with --clock %s: exit %d: %s", at, code, errs)
	}
	if got := printedNow(out); got != "2026-03-02T13:00:00+01:00" {
		t.Errorf("a console started with --clock %s, an hour on, is at %s, want 2026-03-02T13:00:00+01:00", at, got)
	}
	if strings.Contains(out, "#costs") {
		t.Errorf("a console started with --clock %s posted a week:\n%s", at, out)
	}
	code, out, errs = consoleOn(t, db, ":now\n")
	if code != 0 {
		t.Fatalf("a console started without --clock: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "→ #costs: Borealis Labs GPU showback") {
		t.Errorf("a console started without --clock, at the real now, posted no missed week:\n%s", out)
	}
}
