package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// Predicted against actual is told over the leases that waited in the queue: a lease that
// started at once was never told a wait, so it is no hit of its bound (0 is within any bound) and
// its predicted median is none of the predicted p50. The waits of every started lease still
// make the waited p50 and p90.
func TestPredictedAgainstActualIsOverTheLeasesThatWaited(t *testing.T) {
	p := loadAdelaide(t)
	w, _ := showback.ParseWeek("2026-W40", showback.Week{})
	from := w.Start(p.Location) // Mon 28 Sep 2026 00:00 ACST
	h := func(x float64) time.Time { return from.Add(time.Duration(x * float64(time.Hour))) }
	var leases []*qm.Lease
	var preds []qm.WaitPrediction
	add := func(id int, team string, created, queued, started float64, median, p90 time.Duration) {
		l := &qm.Lease{ID: qm.LeaseID(id), User: "x@sc.example", Team: team, Class: "nb", GPUs: 1, State: qm.Expired,
			CreatedAt: h(created), StartedAt: h(started), ExpiresAt: h(started + 1), EndedAt: h(started + 1)}
		if queued > created {
			l.Rules, l.DecidedBy, l.DecidedAt = "two", "ann@sc.example", h(queued)
		}
		leases = append(leases, l)
		preds = append(preds, qm.WaitPrediction{Lease: l.ID, Median: median, P90: p90, At: h(queued)})
	}
	// Five leases that started at once: four told "under 1m", one that the predictor thought
	// would wait 3h (under 6h), though it started at once and was told no wait.
	add(1, "alpha", 9, 9, 9, 0, time.Minute)
	add(2, "alpha", 33, 33, 33, 0, time.Minute)
	add(3, "alpha", 33, 33, 33, 3*time.Hour, 6*time.Hour)
	add(4, "alpha", 58, 58, 58, 0, time.Minute)
	add(5, "alpha", 152, 152, 152, 0, time.Minute)
	// Three that waited in the queue after their approval: 2h (told 2h, under 2h30m), 2h (told
	// 2h, under 2h30m) and 2h15m (told 2h15m, under 2h49m).
	add(6, "alpha", 9.5, 10, 12, 2*time.Hour, 150*time.Minute)
	add(7, "alpha", 9.75, 11, 13, 2*time.Hour, 150*time.Minute)
	add(8, "alpha", 59, 59.75, 62, 135*time.Minute, 169*time.Minute)
	// One queued lease cancelled after 1h, within its bound of 4h: censored, left out.
	leases = append(leases, &qm.Lease{ID: 9, User: "x@sc.example", Team: "alpha", Class: "nb", GPUs: 1, State: qm.Cancelled,
		CreatedAt: h(33), EndedAt: h(34)})
	preds = append(preds, qm.WaitPrediction{Lease: 9, Median: 4 * time.Hour, P90: 4 * time.Hour, At: h(33)})

	r := showback.Build(showback.Input{Policy: p, Week: w, Now: w.End(p.Location).Add(time.Hour), Leases: leases, Predictions: preds})
	q := r.Total.QueueWait
	if q.Started != 8 || q.P50.Duration() != 0 || q.P90.Duration() != 135*time.Minute {
		t.Errorf("waits of the started leases: %d started, p50 %v, p90 %v; want 8, 0s and 2h15m", q.Started, q.P50.Duration(), q.P90.Duration())
	}
	if q.Queued != 3 || q.QueuedP50 == nil || q.QueuedP50.Duration() != 2*time.Hour {
		t.Errorf("the leases that waited in the queue: %d, p50 %v; want 3 and 2h", q.Queued, q.QueuedP50)
	}
	if q.Predicted != 3 || q.PredictedP50 == nil || q.PredictedP50.Duration() != 2*time.Hour || q.WithinBound == nil || !near(*q.WithinBound, 1) {
		t.Errorf("predicted %d, predicted p50 %v, within %v; want 3 (the leases that waited), 2h and 1", q.Predicted, q.PredictedP50, q.WithinBound)
	}
	want := "Queue waits: 8 started, 5 of them at once; waited p50 0m, p90 2h15m; the 3 that waited in the queue waited p50 2h against a predicted p50 of 2h, 100.0% of 3 within the predicted 90% bound.\n"
	if text := r.Text(); !strings.Contains(text, want) {
		t.Errorf("the report does not say %q:\n%s", want, text)
	}
}
