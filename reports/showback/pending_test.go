package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/reports/showback"
)

// waitingWeek is 2026-W49 (Mon 30 Nov – Sun 6 Dec) with requests that waited for a budget owner
// across the week's end, and others that did not.
func waitingWeek() []*qm.Lease {
	req := func(user, team string, created time.Time) *qm.Lease {
		return &qm.Lease{User: user, Team: team, Class: "interactive", GPUs: 2, State: qm.PendingApproval, Rules: "large-request", CreatedAt: created}
	}
	// robotics (a team the policy does not list) asked on Mon 23 Nov and nobody has decided.
	robotics := req("rob@acme.example", "robotics", at("2026-11-23 08:00"))
	// language asked on Fri 27 Nov, still waiting.
	old := req("maya@acme.example", "language", at("2026-11-27 10:00"))
	// Asked on Saturday, approved on Monday 08:00, after the week had ended.
	late := req("maya@acme.example", "language", at("2026-12-05 12:00"))
	late.State, late.DecidedBy, late.DecidedAt = qm.Active, "lee@acme.example", at("2026-12-07 08:00")
	late.StartedAt, late.ExpiresAt = late.DecidedAt, late.DecidedAt.Add(8*time.Hour)
	// Withdrawn on Sunday evening: not waiting at the week's end.
	withdrawn := req("maya@acme.example", "language", at("2026-12-03 09:00"))
	withdrawn.State, withdrawn.EndedAt = qm.Cancelled, at("2026-12-06 20:00")
	// Asked on Sunday 23:00, denied by the approval timeout on Monday 23:00.
	timedOut := req("maya@acme.example", "language", at("2026-12-06 23:00"))
	timedOut.State, timedOut.DecidedBy, timedOut.DecidedAt, timedOut.EndedAt = qm.Denied, qm.SystemActor, at("2026-12-07 23:00"), at("2026-12-07 23:00")
	// vision: decided within the week, one asked the week before and decided in it, one asked
	// after the week's end, and a request no rule stopped that waits in the queue.
	quick := req("alice@acme.example", "vision", at("2026-12-02 10:00"))
	quick.State, quick.DecidedBy, quick.DecidedAt = qm.Active, "dana@acme.example", at("2026-12-02 10:30")
	quick.StartedAt, quick.ExpiresAt = quick.DecidedAt, quick.DecidedAt.Add(8*time.Hour)
	denied := req("alice@acme.example", "vision", at("2026-11-24 10:00"))
	denied.State, denied.DecidedBy, denied.DecidedAt, denied.EndedAt = qm.Denied, "dana@acme.example", at("2026-11-30 10:00"), at("2026-11-30 10:00")
	next := req("alice@acme.example", "vision", at("2026-12-07 01:00"))
	queued := &qm.Lease{User: "bob@acme.example", Team: "vision", Class: "interactive", GPUs: 1, State: qm.Queued, CreatedAt: at("2026-11-27 09:00")}
	return []*qm.Lease{robotics, old, late, withdrawn, timedOut, quick, denied, next, queued}
}

func teamOf(t *testing.T, r *showback.Report, name string) *showback.Team {
	t.Helper()
	for _, tm := range r.Teams {
		if tm.Name == name {
			return tm
		}
	}
	t.Fatalf("no team %s in the report", name)
	return nil
}

// checkWaiting checks the week's requests still waiting for a decision at its end: counted per
// team and for everyone, with the age of the oldest, in the JSON, the text and the chat.
func checkWaiting(t *testing.T, r *showback.Report) {
	t.Helper()
	d := func(days, h int) time.Duration { return time.Duration(days*24+h) * time.Hour }
	for _, c := range []struct {
		team   string
		n      int
		oldest time.Duration
	}{
		{"", 4, d(13, 16)},        // robotics's, from Mon 23 Nov 08:00
		{"language", 3, d(9, 14)}, // from Fri 27 Nov 10:00; Saturday's and Sunday's too
		{"robotics", 1, d(13, 16)},
		{"vision", 0, 0},
	} {
		a := r.Total.Approvals
		if c.team != "" {
			a = teamOf(t, r, c.team).Approvals
		}
		if a.PendingAtEnd != c.n || (c.n == 0) != (a.OldestPending == nil) || c.n > 0 && a.OldestPending.Duration() != c.oldest {
			t.Errorf("team %q: %d waiting at the week's end, the oldest for %v; want %d, %v", c.team, a.PendingAtEnd, a.OldestPending, c.n, c.oldest)
		}
	}
	j := approvalsJSON(t, r)
	if j["pending_at_week_end"] != 4.0 || j["oldest_pending_age_s"] != d(13, 16).Seconds() || j["pending"] != 0.0 {
		t.Errorf("the JSON's approvals: %v; want 4 pending at the week's end, the oldest for %v s, none of the week's own still pending", j, d(13, 16).Seconds())
	}
	if o, _ := j["oldest_pending_request"].(map[string]any); o["lease"] != "L-1" || o["user"] != "rob@acme.example" || o["team"] != "robotics" {
		t.Errorf("the JSON names the oldest request still waiting as %v; want L-1 of rob@acme.example for team robotics", j["oldest_pending_request"])
	}
	text := r.Text()
	for _, want := range []string{
		"Approvals: 4 requests needed approval: 2 approved, 0 denied, 1 expired undecided, 1 withdrawn, 0 pending; median decision 22h15m, p90 1d20h; 4 still undecided at the week's end, the oldest waiting 13d16h (L-1, asked by rob@acme.example for team robotics).\n",
		"approvals: 3 requests needed approval: 1 approved, 0 denied, 1 expired undecided, 1 withdrawn, 0 pending; median decision 1d20h, p90 1d20h; 3 still undecided at the week's end, the oldest waiting 9d14h (L-2, asked by maya@acme.example for team language); human touches",
		"approvals: no request of the week needed approval; 1 still undecided at the week's end, waiting 13d16h (L-1, asked by rob@acme.example for team robotics); human touches",
		"approvals: 1 request needed approval: 1 approved, 0 denied, 0 expired undecided, 0 withdrawn, 0 pending; median decision 30m, p90 30m; human touches",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q:\n%s", want, text)
		}
	}
	if got := fieldValue(r.Post("#gpu-showback", nil), "Approvals"); !strings.HasSuffix(got, "; 4 still undecided at the week's end, the oldest waiting 13d16h (L-1, asked by rob@acme.example for team robotics)") {
		t.Errorf("the channel post's approvals: %q", got)
	}
	if got := fieldValue(r.OwnerDM("lee@acme.example", []string{"language"}), "Approvals"); !strings.HasSuffix(got, "; 3 still undecided at the week's end, the oldest waiting 9d14h (L-2, asked by maya@acme.example for team language)") {
		t.Errorf("language's budget owner's approvals: %q", got)
	}
	if got := fieldValue(r.OwnerDM("dana@acme.example", []string{"vision"}), "Approvals"); strings.Contains(got, "still undecided") {
		t.Errorf("vision's budget owner is told of requests still waiting: %q", got)
	}
}

// A request still waiting for a budget owner at the week's end is counted there, per team and
// for everyone, with how long the oldest had waited, whatever week it was asked in and however
// it was decided after the week's end; one decided or withdrawn before the week's end, or asked
// after it, is not.
func TestRequestsStillWaitingAtTheWeeksEnd(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W49", showback.Week{})
	now := at("2026-12-08 09:00")
	t.Run("build", func(t *testing.T) {
		leases := waitingWeek()
		for i, l := range leases {
			l.ID = qm.LeaseID(i + 1)
		}
		checkWaiting(t, showback.Build(showback.Input{Policy: p, Week: w, Now: now, Leases: leases}))
	})
	// Loaded from each database, as the weekly post loads it.
	for _, b := range []struct {
		name string
		url  func(testing.TB) string
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		t.Run(b.name, func(t *testing.T) {
			db := storetest.Open(t, b.url(t))
			if err := db.Update(t.Context(), nil, func(tx qm.Tx) error {
				for _, l := range waitingWeek() {
					if err := tx.CreateLease(t.Context(), l); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			svc := &showback.Service{Policy: p, Source: db, Clock: fixedClock(now)}
			r, err := svc.Report(t.Context(), w, showback.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			checkWaiting(t, r)
		})
	}
}

// In a week in progress, the requests waiting now are counted, with their age now.
func TestRequestsWaitingNowInAWeekInProgress(t *testing.T) {
	p := examplePolicy(t)
	w, _ := showback.ParseWeek("2026-W49", showback.Week{})
	now := at("2026-12-03 12:00")
	var leases []*qm.Lease
	for i, l := range waitingWeek() {
		if !l.CreatedAt.Before(now) {
			continue // not asked yet
		}
		if l.DecidedAt.After(now) || l.EndedAt.After(now) {
			l.State, l.DecidedBy, l.DecidedAt, l.EndedAt = qm.PendingApproval, "", time.Time{}, time.Time{}
		}
		l.ID = qm.LeaseID(i + 1)
		leases = append(leases, l)
	}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: now, Leases: leases})
	if a := r.Total.Approvals; a.PendingAtEnd != 3 || a.OldestPending == nil || a.OldestPending.Duration() != (10*24+4)*time.Hour {
		t.Errorf("waiting now: %d, the oldest for %v; want 3 (robotics's, language's of 27 Nov and of this morning), 10d4h", a.PendingAtEnd, a.OldestPending)
	}
	want := "; 2 still undecided now, the oldest waiting 6d2h (L-2, asked by maya@acme.example for team language); human touches"
	if text := r.Text(); !strings.Contains(text, want) {
		t.Errorf("the report does not say %q:\n%s", want, text)
	}
}
