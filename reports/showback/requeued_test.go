package showback_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A lease's job that waited in the scheduler's queue after a requeue held no GPU meanwhile: its
// week counts the GPU-hours and the cost of the time it held them, the most GPUs its team held at
// once leaves out a lease whose job waited while another ran, and a wait still going on counts
// up to now. A suspended job's time counts: its GPUs were held.
func TestARequeuedWaitIsNotCountedInTheWeek(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	mon := w.Start(chicago).Add(9 * time.Hour)
	train, _ := p.Class("train")
	price := train.PricePerGPUHour
	requeued := &qm.Lease{ID: 1, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 4, State: qm.Released,
		CreatedAt: mon, StartedAt: mon, ExpiresAt: mon.Add(8 * time.Hour), EndedAt: mon.Add(4 * time.Hour),
		Pauses: []qm.Pause{{Kind: qm.PauseRequeued, From: mon.Add(time.Hour), To: mon.Add(3 * time.Hour)}}}
	// Runs from 1h to 3h, while the first waits; suspended for an hour, which still counts.
	other := &qm.Lease{ID: 2, User: "bob@acme.example", Team: "vision", Class: "train", GPUs: 4, State: qm.Released,
		CreatedAt: mon, StartedAt: mon.Add(time.Hour), ExpiresAt: mon.Add(5 * time.Hour), EndedAt: mon.Add(3 * time.Hour),
		Pauses: []qm.Pause{{Kind: qm.PauseSuspended, From: mon.Add(90 * time.Minute), To: mon.Add(150 * time.Minute)}}}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: mon.Add(7 * 24 * time.Hour), Leases: []*qm.Lease{requeued, other}})
	got := row(t, r, "vision", "train")
	// 4 GPUs for 2h of the first's 4h, and 4 for the second's 2h.
	if !near(got.GPUHours, 16) || !near(got.Cost, 16*price) {
		t.Errorf("vision/train: %v GPU-hours, %v; want 16 and %v (the first lease's 2h in the queue not counted)", got.GPUHours, got.Cost, 16*price)
	}
	if got.PeakGPUs != 4 {
		t.Errorf("peak GPUs %d; want 4: the two leases never held GPUs at once", got.PeakGPUs)
	}

	// Still waiting in the queue, now: counted up to the wait's start.
	waiting := &qm.Lease{ID: 3, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 2, State: qm.Active,
		CreatedAt: mon, StartedAt: mon, ExpiresAt: mon.Add(8 * time.Hour),
		Pauses: []qm.Pause{{Kind: qm.PauseRequeued, From: mon.Add(30 * time.Minute)}}}
	r = showback.Build(showback.Input{Policy: p, Week: w, Now: mon.Add(2 * time.Hour), Leases: []*qm.Lease{waiting}})
	if got := row(t, r, "vision", "train"); !near(got.GPUHours, 1) {
		t.Errorf("a lease waiting in the queue since 30m after it started counts %v GPU-hours 2h after; want 1", got.GPUHours)
	}
}
