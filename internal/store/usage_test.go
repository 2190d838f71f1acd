package store_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// Rollups of the same lease and hour add up, whichever telemetry wrote them, and a week's query
// returns exactly the hours inside it; an hour of a zone half an hour from UTC keeps its start.
func TestUsageRollupsAddUpPerLeaseAndHour(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		h := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
		in := []qm.UsageRollup{
			{Lease: 1, Hour: h, GPUSeconds: 1800, IdleGPUSeconds: 600, UtilSum: 90, Samples: 3},
			{Lease: 1, Hour: h, GPUSeconds: 1800, IdleGPUSeconds: 1800, UtilSum: 0, Samples: 3},
			{Lease: 2, Hour: h.Add(time.Hour), GPUSeconds: 7200, Samples: 1, UtilSum: 50},
			{Lease: 2, Hour: h.Add(-time.Hour), GPUSeconds: 3600, Samples: 1},
			{Lease: 3, Hour: h.Add(90 * time.Minute), GPUSeconds: 900, Samples: 1}, // 12:00 in Kolkata
		}
		if err := db.AddUsage(t.Context(), in); err != nil {
			t.Fatal(err)
		}
		got, err := db.Usage(t.Context(), h, h.Add(2*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 {
			t.Fatalf("got %d rollups, want 3 (the hour before the window is left out): %+v", len(got), got)
		}
		a := got[0]
		if a.Lease != 1 || !a.Hour.Equal(h) || a.GPUSeconds != 3600 || a.IdleGPUSeconds != 2400 || a.Samples != 6 || a.MeanUtilization() != 15 {
			t.Errorf("lease 1's hour = %+v, want 3600 GPU-s, 2400 idle, 6 samples, mean 15%%", a)
		}
		if b := got[1]; b.Lease != 2 || b.GPUSeconds != 7200 || b.MeanUtilization() != 50 {
			t.Errorf("lease 2's hour = %+v", b)
		}
		if c := got[2]; c.Lease != 3 || !c.Hour.Equal(h.Add(90*time.Minute)) {
			t.Errorf("lease 3's hour, starting at half past = %+v", c)
		}
	})
}
