package waits

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// A pool whose every GPU is held is never said to have no wait expected, however often requests
// have started at once before: a history of short leases that all started at once taught the
// predictor that nobody waits, while every GPU of the class is now held for hours.
func TestAFullPoolIsNeverNoWait(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	w := New()
	now := t0
	var id qm.LeaseID
	for i := range 300 {
		id++
		user := []string{"ana", "ben", "caro"}[i%3]
		req := qm.WaitRequest{Lease: id, Class: "lab", User: user, Team: "optics", GPUs: 1, Duration: time.Hour}
		w.Predict(now, req, nil, 2)
		l := &qm.Lease{ID: id, User: user, Team: "optics", Class: "lab", GPUs: 1, Duration: time.Hour, State: qm.Active, StartedAt: now, CreatedAt: now}
		w.Started(l, now)
		now = now.Add(5 * time.Minute)
		l.EndedAt = now
		w.Ended(l)
		now = now.Add(time.Minute)
	}
	for _, user := range []string{"ana", "ben"} {
		id++
		l := &qm.Lease{ID: id, User: user, Team: "optics", Class: "lab", GPUs: 1, Duration: 4 * time.Hour, State: qm.Active, StartedAt: now, CreatedAt: now}
		w.Predict(now, qm.WaitRequest{Lease: id, Class: "lab", User: user, Team: "optics", GPUs: 1, Duration: 4 * time.Hour}, nil, 2)
		w.Started(l, now)
	}
	est := w.Predict(now.Add(5*time.Minute), qm.WaitRequest{Class: "lab", User: "caro", Team: "optics", GPUs: 1, Duration: time.Hour}, nil, 2)
	if est.Median < time.Minute || est.P90 < est.Median {
		t.Fatalf("every GPU held for hours: %+v; want a wait of a minute or more", est)
	}
}
