package waits

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// The predictor follows the leases the service reports: a full class predicts the next expiry,
// and once that lease ends the wait is zero.
func TestFollowsLeases(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	w := New()
	l := &qm.Lease{ID: 1, User: "a", Team: "vision", Class: "train", GPUs: 8, Duration: 2 * time.Hour, State: qm.Active, StartedAt: t0}
	w.Started(l, t0)
	req := qm.WaitRequest{Class: "train", User: "b", Team: "vision", GPUs: 1, Duration: time.Hour}
	est := w.Predict(t0.Add(30*time.Minute), req, nil, 8)
	if est.Median != 90*time.Minute || est.P90 < est.Median {
		t.Fatalf("full class: %+v; want the expiry 90 minutes away", est)
	}
	l.EndedAt = t0.Add(time.Hour)
	w.Ended(l)
	if est := w.Predict(t0.Add(time.Hour), req, nil, 8); est.Median != 0 {
		t.Fatalf("after the lease ended: %+v", est)
	}
	// A queued lease's estimate is kept and handed back when it starts.
	q := &qm.Lease{ID: 2, User: "b", Team: "vision", Class: "train", GPUs: 8, Duration: time.Hour, CreatedAt: t0}
	w.Predict(t0, qm.WaitRequest{Lease: 2, Class: "train", User: "b", GPUs: 8, Duration: time.Hour}, nil, 8)
	if _, ok := w.estimates[2]; !ok {
		t.Fatal("the queued lease's estimate was not kept")
	}
	q.StartedAt = t0.Add(time.Hour)
	w.Started(q, t0)
	if _, ok := w.estimates[2]; ok {
		t.Fatal("the estimate outlived the start")
	}
}
