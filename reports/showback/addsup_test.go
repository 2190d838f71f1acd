package showback_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// The figures shown add up: a team's GPU-hours, idle and observed GPU-hours in the text are the sums
// of its rows as the text and the CSV show them, the total the sum of the teams, and each team's bar
// in the chart (busy and idle) its GPU-hours as shown. Three leases of 20 minutes in two classes
// are 0.33 GPU-hours each: the team shows 0.99, not 1.00 beside rows of 0.33.
func TestTotalsAreTheSumsOfTheRowsShown(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(chicago).Add(10 * time.Hour)
	var leases []*qm.Lease
	var usage []qm.UsageRollup
	for i, tc := range []struct{ team, class string }{{"vision", "interactive"}, {"vision", "train"}, {"vision", "train"}, {"language", "interactive"}, {"language", "train"}} {
		s := from.Add(time.Duration(i) * time.Hour)
		l := &qm.Lease{ID: qm.LeaseID(i + 1), User: "alice@acme.example", Team: tc.team, Class: tc.class, GPUs: 1, State: qm.Released,
			CreatedAt: s, StartedAt: s, ExpiresAt: s.Add(time.Hour), EndedAt: s.Add(20 * time.Minute)}
		leases = append(leases, l)
		usage = append(usage, qm.UsageRollup{Lease: l.ID, Hour: qm.HourStart(s, chicago), GPUSeconds: 1200, IdleGPUSeconds: 1000, UtilSum: 1, Samples: 1})
	}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(7 * 24 * time.Hour), Leases: leases, Usage: usage})

	rows, err := csv.NewReader(bytes.NewReader(r.CSV())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cols := map[string]int{}
	for i, c := range rows[0] {
		cols[c] = i
	}
	sum := func(rs [][]string, col string) string {
		cents := 0
		for _, rec := range rs {
			v, err := strconv.ParseFloat(rec[cols[col]], 64)
			if err != nil {
				t.Fatal(err)
			}
			cents += int(v*100 + 0.5)
		}
		return fmt.Sprintf("%d.%02d", cents/100, cents%100)
	}
	shown := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	text := r.Text()
	for _, col := range []struct {
		name string
		team func(*showback.Team) float64
	}{{"gpu_hours", func(t *showback.Team) float64 { return t.GPUHours }}, {"idle_gpu_hours", func(t *showback.Team) float64 { return t.Idle() }},
		{"observed_gpu_hours", func(t *showback.Team) float64 { return t.ObservedGPUHours }}} {
		for _, tm := range r.Teams {
			var mine [][]string
			for _, rec := range rows[1:] {
				if rec[cols["team"]] == tm.Name {
					mine = append(mine, rec)
				}
			}
			if got, want := shown(col.team(tm)), sum(mine, col.name); got != want {
				t.Errorf("team %s shows %s %s; its CSV rows add up to %s", tm.Name, got, col.name, want)
			}
		}
	}
	total := r.Total.GPUHours
	if got, want := shown(total), sum(rows[1:], "gpu_hours"); got != want || !strings.Contains(text, "Total: "+want+" GPU-hours") {
		t.Errorf("the total shows %s GPU-hours; the CSV's rows add up to %s:\n%s", got, want, text)
	}
	teams, busy, idle := r.ChartData()
	for i, name := range teams {
		for _, tm := range r.Teams {
			if tm.Name == name && shown(busy[i]+idle[i]) != shown(tm.GPUHours) {
				t.Errorf("team %s's bar is %s + %s GPU-hours; the text shows %s", name, shown(busy[i]), shown(idle[i]), shown(tm.GPUHours))
			}
		}
	}
}
