package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// idleOf is the week's GPU-hours and idle GPU-hours of a team's class, from `quartermaster report
// --format json` on db.
func idleOf(t *testing.T, db, week, now, team, class string) (gpuHours, idle float64) {
	t.Helper()
	r := showbackRow(t, db, week, now, team, class)
	return r.GPUHours, r.Idle
}

// weekRow is a row of `quartermaster report --format json`.
type weekRow struct {
	Team, Class string
	GPUHours    float64 `json:"gpu_hours"`
	Idle        float64 `json:"idle_gpu_hours"`
	Observed    float64 `json:"observed_gpu_hours"`
}

// showbackRow is the week's row of a team's class, from `quartermaster report --format json` on db.
func showbackRow(t *testing.T, db, week, now, team, class string) weekRow {
	t.Helper()
	pol := filepath.Join(t.TempDir(), "borealis.yaml")
	if err := os.WriteFile(pol, []byte(borealisPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"report", "--policy", pol, "--db", db, "--week", week, "--format", "json", "--now", now}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errb.String())
	}
	var r struct{ Rows []weekRow }
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("report: %v\n%s", err, out.String())
	}
	for _, row := range r.Rows {
		if row.Team == team && row.Class == class {
			return row
		}
	}
	t.Fatalf("report has no row of %s %s:\n%s", team, class, out.String())
	return weekRow{}
}

// A console started again on the same database goes on with the leases an earlier one started as
// it would with its own: a :util set in the earlier console still holds (the lease is warned and
// reclaimed for the idle time since, and that time is recorded idle), and a :util set now for a
// lease started earlier holds until the lease ends, however many hours that is. On SQLite and on
// PostgreSQL.
func TestConsoleStartedAgainKeepsUtilization(t *testing.T) {
	t.Parallel()
	dbs := map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "qm.db") },
		"postgres": func(t *testing.T) string { return storetest.Postgres(t) },
	}
	for name, open := range dbs {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			// Monday 3 March 2031, 10:00 in Berlin: L-1 (4 bigtrain GPUs) and L-2 (1 notebook
			// GPU, idle after 30m, reclaimed 10m after the warning); L-2 is idle from the start.
			first := "quinn@borealis.example: /gpu request 4 bigtrain 8h\npia@borealis.example: /gpu request 1 notebook 4h\n:util L-2 0\n:advance 20m\n"
			if code, out, errs := consoleOn(t, db, first, "--clock", "2031-03-03T09:00:00Z"); code != 0 || !strings.Contains(out, "L-2 is active") {
				t.Fatalf("first console: exit %d: %s%s", code, out, errs)
			}
			// 10:20: L-1 goes idle for 2h10m, then is released.
			second := ":util L-1 0\n:advance 2h10m\nquinn@borealis.example: /gpu release L-1\n"
			code, out, errs := consoleOn(t, db, second, "--clock", "2031-03-03T09:20:00Z")
			if code != 0 {
				t.Fatalf("second console: exit %d: %s", code, errs)
			}
			if !strings.Contains(out, "L-2 has shown no GPU activity for 30m") || !strings.Contains(out, "L-2 was reclaimed: idle for 40m") {
				t.Errorf("L-2, idle since the first console, was not warned at 10:30 and reclaimed at 10:40:\n%s", out)
			}
			if strings.Contains(out, "L-2 is busy again") {
				t.Errorf("the second console took L-2 for busy:\n%s", out)
			}
			if gpu, idle := idleOf(t, db, "2031-W10", "2031-03-10T09:00:00Z", "ocean", "notebook"); gpu != 0.67 || idle != 0.67 {
				t.Errorf("notebook: %v GPU-hours, %v idle; want 0.67 (40m) all idle", gpu, idle)
			}
			// 4 GPUs from 10:00 to 12:30, idle from 10:20.
			if gpu, idle := idleOf(t, db, "2031-W10", "2031-03-10T09:00:00Z", "ocean", "bigtrain"); gpu != 10 || idle != 8.67 {
				t.Errorf("bigtrain: %v GPU-hours, %v idle; want 10, 8.67 idle (from 10:20 to 12:30)", gpu, idle)
			}
		})
	}
}

// The time the simulated clock moves on while no console runs (a console started again with a
// later --clock) is recorded as :advance records it: a lease that ended in it at its expiry is
// recorded to its end, idle where :util last set it idle and at the default elsewhere, so the
// showback observes all of its hours. On SQLite and on PostgreSQL.
func TestConsoleStartedLaterRecordsTheTimeBetween(t *testing.T) {
	t.Parallel()
	dbs := map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "qm.db") },
		"postgres": func(t *testing.T) string { return storetest.Postgres(t) },
	}
	for name, open := range dbs {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			// 10:00 in Berlin: L-1, 4 bigtrain GPUs for 2h, idle from the start; L-2, 1 notebook
			// GPU for 1h, busy.
			first := "quinn@borealis.example: /gpu request 4 bigtrain 2h\npia@borealis.example: /gpu request 1 notebook 1h\n:util L-1 0\n:advance 10m\n"
			if code, out, errs := consoleOn(t, db, first, "--clock", "2031-03-03T09:00:00Z"); code != 0 || !strings.Contains(out, "L-2 is active") {
				t.Fatalf("first console: exit %d: %s%s", code, out, errs)
			}
			// 14:00: both ended while no console ran.
			if code, out, errs := consoleOn(t, db, "quinn@borealis.example: /gpu list\n", "--clock", "2031-03-03T13:00:00Z"); code != 0 {
				t.Fatalf("second console: exit %d: %s%s", code, out, errs)
			}
			if r := showbackRow(t, db, "2031-W10", "2031-03-10T09:00:00Z", "ocean", "bigtrain"); r.GPUHours != 8 || r.Observed != 8 || r.Idle != 8 {
				t.Errorf("bigtrain: %+v; want 8 GPU-hours, all observed and idle", r)
			}
			if r := showbackRow(t, db, "2031-W10", "2031-03-10T09:00:00Z", "ocean", "notebook"); r.GPUHours != 1 || r.Observed != 1 || r.Idle != 0 {
				t.Errorf("notebook: %+v; want 1 GPU-hour, observed, none idle", r)
			}
		})
	}
}
