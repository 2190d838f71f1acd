package showback_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// Idle GPU-hours are never more than the GPU-hours held: telemetry of hours a lease did not
// hold its GPUs (samples after its end) and doubled telemetry of one hour (two reports of the
// same GPUs) count no more than the GPUs held in that hour, so the idle share in the text, the
// owners' message and the CSV stays within 100 %, and doubled telemetry keeps its hour's share.
func TestIdleNeverExceedsTheGPUHoursHeld(t *testing.T) {
	p := loadBerlin(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location)
	// optik: 2 GPUs for 3 hours; telemetry saw them idle for 5 hours.
	l := &qm.Lease{ID: 1, User: "jana@nordlicht.example", Team: "optik", Class: "a100", GPUs: 2, State: qm.Expired,
		CreatedAt: from, StartedAt: from, ExpiresAt: from.Add(3 * time.Hour), EndedAt: from.Add(3 * time.Hour)}
	// sprache: 1 GPU for 2 hours; the first hour reported twice, all idle, the second busy.
	m := &qm.Lease{ID: 2, User: "lars@nordlicht.example", Team: "sprache", Class: "a100", GPUs: 1, State: qm.Expired,
		CreatedAt: from, StartedAt: from, ExpiresAt: from.Add(2 * time.Hour), EndedAt: from.Add(2 * time.Hour)}
	var usage []qm.UsageRollup
	for h := range 5 {
		usage = append(usage, qm.UsageRollup{Lease: 1, Hour: from.Add(time.Duration(h) * time.Hour), GPUSeconds: 7200, IdleGPUSeconds: 7200, UtilSum: 0, Samples: 10})
	}
	usage = append(usage,
		qm.UsageRollup{Lease: 2, Hour: from, GPUSeconds: 7200, IdleGPUSeconds: 7200, Samples: 20},
		qm.UsageRollup{Lease: 2, Hour: from.Add(time.Hour), GPUSeconds: 3600, IdleGPUSeconds: 0, UtilSum: 900, Samples: 10})
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.AddDate(0, 0, 8), Leases: []*qm.Lease{l, m}, Usage: usage})
	text := r.Text()
	for _, want := range []string{
		"optik: 6.00 GPU-hours", "idle 6.00 GPU-hours (100.0%)",
		"sprache: 2.00 GPU-hours", "idle 1.00 GPU-hours (50.0%)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	for _, row := range csvRows(t, r) {
		num := func(k string) float64 {
			v, err := strconv.ParseFloat(row[k], 64)
			if err != nil {
				t.Fatalf("CSV %s %q: %v", k, row[k], err)
			}
			return v
		}
		if num("idle_gpu_hours") > num("gpu_hours") || num("observed_gpu_hours") > num("gpu_hours") {
			t.Errorf("CSV row %v: idle or observed GPU-hours above the GPU-hours held", row)
		}
	}
	for _, tm := range r.Teams {
		if s := tm.IdleShare(); s != nil && *s > 1 {
			t.Errorf("%s: idle share %.1f%%, above 100%%", tm.Name, 100**s)
		}
	}
}
