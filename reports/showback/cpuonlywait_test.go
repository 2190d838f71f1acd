package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// The queue waits are waits for GPUs: a CPU-only job's lease (a template of gpus: 0), which the
// sim backend starts at once and the wait predictor leaves out, is no wait of zero in them, nor a
// hit or a miss of its predicted bound; it still counts among the week's leases.
func TestCPUOnlyLeasesAreLeftOutOfTheQueueWaits(t *testing.T) {
	p := loadAdelaide(t)
	w, _ := showback.ParseWeek("2026-W47", showback.Week{})
	from := w.Start(p.Location)
	h := func(n float64) time.Time { return from.Add(time.Duration(n * float64(time.Hour))) }
	var leases []*qm.Lease
	var preds []qm.WaitPrediction
	add := func(gpus int, asked, started, ended time.Time, median, p90 time.Duration) {
		id := qm.LeaseID(len(leases) + 1)
		l := &qm.Lease{ID: id, User: "ann@sc.example", Team: "alpha", Class: "nb", GPUs: gpus, State: qm.Expired,
			CreatedAt: asked, StartedAt: started, ExpiresAt: ended, EndedAt: ended}
		if started.IsZero() {
			l.State = qm.Cancelled
		}
		leases = append(leases, l)
		preds = append(preds, qm.WaitPrediction{Lease: id, Median: median, P90: p90, At: asked})
	}
	// Two GPU leases: one waited 1h (within its bound of 2h), one 3h (past it).
	add(1, h(10), h(11), h(13), 2*time.Hour, 2*time.Hour)
	add(1, h(10), h(13), h(15), 2*time.Hour, 2*time.Hour)
	// Three CPU-only jobs started at once, and one that left the queue unstarted after 5h.
	for i := range 3 {
		add(0, h(20+float64(i)), h(20+float64(i)), h(22+float64(i)), 0, time.Minute)
	}
	add(0, h(30), time.Time{}, h(35), 0, time.Hour)
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.AddDate(0, 0, 8), Leases: leases, Predictions: preds})

	q := r.Total.QueueWait
	if q.Started != 2 || q.P50 == nil || q.P50.Duration() != 2*time.Hour || q.P90.Duration() != 3*time.Hour {
		t.Errorf("waits %+v; want 2 started (the GPU leases), p50 2h, p90 3h", q)
	}
	if q.Predicted != 2 || q.LeftPastBound != 0 || q.WithinBound == nil || !near(*q.WithinBound, 0.5) {
		t.Errorf("predicted %d, left past the bound %d, within it %v; want 2, 0 and 0.5 (1 of the 2 GPU leases)", q.Predicted, q.LeftPastBound, q.WithinBound)
	}
	if q.CPUOnly != 3 {
		t.Errorf("%d CPU-only jobs' leases started, want 3", q.CPUOnly)
	}
	if r.Total.Leases != 5 {
		t.Errorf("%d leases in the week, want 5: the CPU-only jobs' count", r.Total.Leases)
	}
	want := "Queue waits: 2 started, besides 3 CPU-only jobs, which wait for no GPU; waited p50 2h, p90 3h; the 2 that waited in the queue waited p50 2h against a predicted p50 of 2h, 50.0% of 2 within the predicted 90% bound.\n"
	if text := r.Text(); !strings.Contains(text, want) {
		t.Errorf("the report does not say %q:\n%s", want, text)
	}
	// A week of CPU-only jobs alone started no lease that waited for GPUs.
	only := showback.Build(showback.Input{Policy: p, Week: w, Now: from.AddDate(0, 0, 8), Leases: leases[2:3], Predictions: preds})
	if got, want := showback.WaitLine(only.Total.QueueWait), "no workspace with GPUs started, besides 1 CPU-only job, which waits for no GPU"; got != want {
		t.Errorf("CPU-only jobs alone: %q, want %q", got, want)
	}
}
