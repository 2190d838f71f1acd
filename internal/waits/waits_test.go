package waits

import (
	"context"
	"errors"
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

// memHistory is a History in memory, standing in for the database (internal/store implements
// the real one, tested there on SQLite and PostgreSQL).
type memHistory struct {
	classes []string
	records [][]byte
	fail    error
}

func (h *memHistory) AddWaitRecord(_ context.Context, class string, _ time.Time, rec []byte) error {
	if h.fail != nil {
		return h.fail
	}
	h.classes, h.records = append(h.classes, class), append(h.records, rec)
	return nil
}

func (h *memHistory) WaitRecords(_ context.Context, _ time.Time, each func(string, []byte) error) error {
	for i := range h.records {
		if err := each(h.classes[i], h.records[i]); err != nil {
			return err
		}
	}
	return nil
}

// TestHistorySurvivesARestart: what one predictor learned, kept by Flush, teaches a new one through
// Load. This scheduler starts a request 5 minutes after the class's lease expires; a predictor
// with the history says so, a fresh one can only follow the simulation.
func TestHistorySurvivesARestart(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	h := &memHistory{fail: errors.New("database away")}
	first := New()
	first.SetHistory(h)
	running := &qm.Lease{ID: 1, User: "a", Class: "train", GPUs: 8, Duration: time.Hour, State: qm.Active, StartedAt: t0}
	first.Started(running, t0)
	for i := range 40 {
		id := qm.LeaseID(100 + i)
		first.Predict(t0, qm.WaitRequest{Lease: id, Class: "train", User: "b", GPUs: 8, Duration: time.Hour}, nil, 8)
		q := &qm.Lease{ID: id, User: "b", Class: "train", GPUs: 8, Duration: time.Hour, CreatedAt: t0, StartedAt: t0.Add(65 * time.Minute)}
		first.Started(q, t0)
		q.EndedAt = q.StartedAt
		first.Ended(q)
	}
	if err := first.Flush(context.Background()); err == nil {
		t.Fatal("Flush said nothing of a failed write")
	}
	h.fail = nil
	if err := first.Flush(context.Background()); err != nil || len(h.records) != 40 {
		t.Fatalf("Flush after the failure: %v, %d records; want the 40 kept", err, len(h.records))
	}

	req := qm.WaitRequest{Class: "train", User: "b", GPUs: 8, Duration: time.Hour}
	fresh := New()
	fresh.Started(running, t0)
	if est := fresh.Predict(t0, req, nil, 8); est.Median != time.Hour {
		t.Fatalf("without history: %+v; want the simulated 1h", est)
	}
	second := New()
	second.SetHistory(h)
	if n, err := second.Load(context.Background(), time.Time{}); err != nil || n != 40 {
		t.Fatalf("Load: %d, %v", n, err)
	}
	second.Started(running, t0)
	if est := second.Predict(t0, req, nil, 8); est.Median != 65*time.Minute {
		t.Fatalf("with the history: %+v; want the learned 65m", est)
	}
}
