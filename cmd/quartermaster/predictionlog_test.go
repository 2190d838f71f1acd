package main

import (
	"context"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/waits"
)

// keptPredictions is a report store that keeps the wait predictions it is given.
type keptPredictions struct {
	qm.ReportStore
	kept []qm.WaitPrediction
}

func (k *keptPredictions) AddWaitPredictions(_ context.Context, ps []qm.WaitPrediction) error {
	k.kept = append(k.kept, ps...)
	return nil
}

// The weekly report compares the wait a requester was told with the wait that followed: a
// prediction the service asked for only so that the predictor learns (its requester was told
// another estimate) is not kept as what they were told.
func TestOnlyWaitsRequestersWereToldAreKept(t *testing.T) {
	t.Parallel()
	st := &keptPredictions{}
	log := newPredictionLog(waits.New(), st)
	now := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	log.Predict(now, qm.WaitRequest{Lease: 1, Class: "interactive", User: "alice@acme.example", GPUs: 1, Duration: time.Hour, Unshown: true}, nil, 4)
	log.Predict(now, qm.WaitRequest{Lease: 2, Class: "interactive", User: "alice@acme.example", GPUs: 1, Duration: time.Hour}, nil, 4)
	if err := log.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(st.kept) != 1 || st.kept[0].Lease != 2 {
		t.Fatalf("kept %+v; want only L-2's, the one whose requester was told it", st.kept)
	}
}
