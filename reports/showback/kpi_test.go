package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A queued lease that left the queue without starting is right-censored, as the wait predictor
// scores itself (docs/prediction.md): one that had waited longer than its predicted 90 % bound
// when it left is a miss; one that left within its bound tells nothing and is left out. Neither
// is a wait of zero, nor a start. Leases that started at once were told no wait: they are no hit
// of a bound either, so the miss is 1 of 1.
func TestQueuedLeaseThatLeftUnstartedIsCensoredAgainstItsBound(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W49", showback.Week{})
	// Four leases that started at once, each told "under 1m".
	var leases []*qm.Lease
	var preds []qm.WaitPrediction
	for i := 1; i <= 4; i++ {
		leases = append(leases, &qm.Lease{ID: qm.LeaseID(i), User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, State: qm.Expired,
			CreatedAt: at("2026-12-04 10:00"), StartedAt: at("2026-12-04 10:00"), ExpiresAt: at("2026-12-04 18:00"), EndedAt: at("2026-12-04 18:00")})
		preds = append(preds, qm.WaitPrediction{Lease: qm.LeaseID(i), P90: time.Minute, At: at("2026-12-04 10:00")})
	}
	// L-5 queued at 10:00, told "about 2h, under 4h", cancelled at 15:00 after 5h: a miss.
	past := &qm.Lease{ID: 5, User: "maya@acme.example", Team: "language", Class: "interactive", GPUs: 1, State: qm.Cancelled,
		CreatedAt: at("2026-12-04 10:00"), EndedAt: at("2026-12-04 15:00")}
	// L-6 queued at 10:00, told "under 4h", cancelled at 11:00: left out.
	early := &qm.Lease{ID: 6, User: "maya@acme.example", Team: "language", Class: "interactive", GPUs: 1, State: qm.Cancelled,
		CreatedAt: at("2026-12-04 10:00"), EndedAt: at("2026-12-04 11:00")}
	// L-7 waited for approval and was denied: never queued, no prediction.
	denied := &qm.Lease{ID: 7, User: "carl@contractor.example", Team: "vision", Class: "interactive", GPUs: 1, State: qm.Denied, Rules: "contractor",
		CreatedAt: at("2026-12-04 10:00"), EndedAt: at("2026-12-04 20:00"), DecidedBy: "dana@acme.example", DecidedAt: at("2026-12-04 20:00")}
	leases = append(leases, past, early, denied)
	preds = append(preds, qm.WaitPrediction{Lease: 5, Median: 2 * time.Hour, P90: 4 * time.Hour, At: at("2026-12-04 10:00")},
		qm.WaitPrediction{Lease: 6, Median: 2 * time.Hour, P90: 4 * time.Hour, At: at("2026-12-04 10:00")})
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: at("2026-12-07 09:00"), Leases: leases, Predictions: preds})
	q := r.Total.QueueWait
	if q.Started != 4 || q.P50.Duration() != 0 || q.P90.Duration() != 0 || q.Queued != 0 || q.Predicted != 0 || q.PredictedP50 != nil {
		t.Errorf("waits of the started leases = %+v; want 4 started at once, p50 and p90 0, none predicted", q)
	}
	if q.LeftPastBound != 1 || q.WithinBound == nil || !near(*q.WithinBound, 0) {
		t.Errorf("within the bound %v, left past it %d; want 0 (0 of 1: L-5 waited 5h against 4h) and 1", q.WithinBound, q.LeftPastBound)
	}
	want := "Queue waits: 4 started, all at once; waited p50 0m, p90 0m; 0.0% of 1 within the predicted 90% bound (1 left the queue unstarted after waiting past it).\n"
	if text := r.Text(); !strings.Contains(text, want) {
		t.Errorf("the report does not say %q:\n%s", want, text)
	}
	var lang *showback.Team
	for _, tm := range r.Teams {
		if tm.Name == "language" {
			lang = tm
		}
	}
	if got, want := showback.WaitLine(lang.QueueWait), "no workspace started; 1 left the queue unstarted after waiting past its predicted 90% bound (0.0% within it)"; got != want {
		t.Errorf("language's queue waits: %q, want %q", got, want)
	}
}

// A new team's time to first GPU is told in the week its first workspace became active too,
// when that is a later week than its first request: the week of the request could not tell it.
func TestTimeToFirstGPUIsToldInTheWeekOfTheFirstStart(t *testing.T) {
	p := examplePolicy(t)
	// Asked Sunday 6 Dec 15:00 (2026-W49), approved and started Monday 7 Dec 10:00 (2026-W50),
	// after the 09:00 post of 2026-W49; first signed in Thursday 3 Dec 12:00.
	l := &qm.Lease{ID: 1, User: "rob@acme.example", Team: "robotics", Class: "interactive", GPUs: 2, State: qm.Expired, Rules: "large-request",
		CreatedAt: at("2026-12-06 15:00"), StartedAt: at("2026-12-07 10:00"), ExpiresAt: at("2026-12-07 11:00"), EndedAt: at("2026-12-07 11:00"),
		DecidedBy: "dana@acme.example", DecidedAt: at("2026-12-07 10:00")}
	f := qm.TeamFirst{Team: "robotics", FirstRequest: l.CreatedAt, FirstLogin: at("2026-12-03 12:00"), FirstStart: l.StartedAt}
	for _, c := range []struct {
		week, now, want string
	}{
		{"2026-W49", "2026-12-07 09:00", "New team: robotics asked for GPUs for the first time on Sun 6 Dec 15:00 CST (first signed in on Thu 3 Dec 12:00 CST); no workspace has started yet\n"},
		{"2026-W50", "2026-12-14 09:00", "New team: robotics asked for GPUs for the first time on Sun 6 Dec 15:00 CST (first signed in on Thu 3 Dec 12:00 CST); time to first GPU 3d22h, from the first sign-in\n"},
	} {
		w, _ := showback.ParseWeek(c.week, showback.Week{})
		r := showback.Build(showback.Input{Policy: p, Week: w, Now: at(c.now), Leases: []*qm.Lease{l}, Firsts: []qm.TeamFirst{f}})
		if text := r.Text(); !strings.Contains(text, c.want) {
			t.Errorf("%s: the report does not say %q:\n%s", c.week, c.want, text)
		}
	}
	// A week after both says nothing of it.
	w, _ := showback.ParseWeek("2026-W51", showback.Week{})
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: at("2026-12-21 09:00"), Leases: []*qm.Lease{l}, Firsts: []qm.TeamFirst{f}})
	if text := r.Text(); strings.Contains(text, "New team") {
		t.Errorf("2026-W51 names robotics as a new team:\n%s", text)
	}
}
