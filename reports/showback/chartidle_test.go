package showback_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// The chart's idle bar is never longer than the team's GPU-hours: telemetry that saw more idle
// time than the team held GPUs (late or doubled rollups) draws the whole bar idle, not more.
func TestChartIdleIsClampedToTheGPUHoursUsed(t *testing.T) {
	p := loadBerlin(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location)
	l := &qm.Lease{ID: 1, User: "jana@nordlicht.example", Team: "optik", Class: "a100", GPUs: 2, State: qm.Expired,
		CreatedAt: from, StartedAt: from, ExpiresAt: from.Add(3 * time.Hour), EndedAt: from.Add(3 * time.Hour)}
	m := &qm.Lease{ID: 2, User: "lars@nordlicht.example", Team: "sprache", Class: "a100", GPUs: 1, State: qm.Expired,
		CreatedAt: from, StartedAt: from, ExpiresAt: from.Add(4 * time.Hour), EndedAt: from.Add(4 * time.Hour)}
	var usage []qm.UsageRollup
	for h := range 5 { // 5 hours of 2 idle GPUs for a lease of 3 hours
		usage = append(usage, qm.UsageRollup{Lease: 1, Hour: from.Add(time.Duration(h) * time.Hour), GPUSeconds: 7200, IdleGPUSeconds: 7200})
	}
	usage = append(usage, qm.UsageRollup{Lease: 2, Hour: from, GPUSeconds: 3600, IdleGPUSeconds: 1800})
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.AddDate(0, 0, 8), Leases: []*qm.Lease{l, m}, Usage: usage})
	teams, busy, idle := r.ChartData()
	for i, name := range teams {
		used := r.Teams[i].GPUHours
		if idle[i] > used || !near(busy[i]+idle[i], used) || busy[i] < 0 {
			t.Errorf("%s: busy %v + idle %v, want a bar of its %v GPU-hours, idle no longer than them", name, busy[i], idle[i], used)
		}
	}
	if idle[0] != 6 || idle[1] != 0.5 {
		t.Errorf("idle bars %v, want 6 (all of optik's 6 GPU-hours) and 0.5", idle)
	}
}
