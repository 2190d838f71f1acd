package qm

import (
	"context"
	"time"
)

// TeamFirst is when a team first asked for GPUs (its first request for a workspace with GPUs; a
// quota increase, an extension or a CPU-only job is not one), when anyone of it first signed in
// with single sign-on (zero when nobody has), and when its first workspace with GPUs became active
// (zero while none has). The showback's time-to-first-GPU runs from the
// team's first contact, the earlier of its first login and its first request, to its first start.
type TeamFirst struct {
	Team         string
	FirstRequest time.Time
	FirstLogin   time.Time
	FirstStart   time.Time
}

// Contact is the team's first contact: its first login when that came before its first request.
func (f TeamFirst) Contact() time.Time {
	if !f.FirstLogin.IsZero() && f.FirstLogin.Before(f.FirstRequest) {
		return f.FirstLogin
	}
	return f.FirstRequest
}

// WaitedInQueue is the shortest wait, from a request (or its approval) to the start, that counts
// as waiting in the queue: a lease that started sooner started at once and was told no wait, so
// its prediction is neither a hit nor a miss of the predicted bound (the showback's predicted
// against actual, the prediction metrics), as the predictor's tightness counts only the jobs that
// waited a minute or more (docs/prediction.md).
const WaitedInQueue = time.Minute

// WaitPrediction is the queue wait predicted for a lease when it was asked for: what the requester
// was told (or, for a lease that started at once, what the predictor expected).
type WaitPrediction struct {
	Lease  LeaseID
	Median time.Duration
	P90    time.Duration
	At     time.Time
}

// ReportStore reads what the weekly showback is built from.
type ReportStore interface {
	UsageStore
	// ReportLeases lists the leases of every kind created before to that had not ended before from,
	// ordered by id.
	ReportLeases(ctx context.Context, from, to time.Time) ([]*Lease, error)
	// HistoryStart is when the first lease was ever asked for; zero when none was.
	HistoryStart(ctx context.Context) (time.Time, error)
	// LeaseTeams lists the teams that have ever had a lease, by name.
	LeaseTeams(ctx context.Context) ([]string, error)
	// TeamFirsts gives, for each of the named teams whose first request for GPUs (a workspace
	// lease with GPUs; not a quota increase, an extension or a CPU-only job) was made at or after
	// since, or whose first such workspace started at or after since, that request, the team's
	// first sign-in and its first such workspace's start.
	TeamFirsts(ctx context.Context, teams []string, since time.Time) ([]TeamFirst, error)
	// WaitPredictions lists the predictions kept for leases that started in [from, to), and for
	// those that ended in it without starting.
	WaitPredictions(ctx context.Context, from, to time.Time) ([]WaitPrediction, error)
	// AddWaitPredictions keeps predictions; a lease's first one stands.
	AddWaitPredictions(ctx context.Context, ps []WaitPrediction) error
}
