package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

var weekStart = time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC) // Mon 23 Nov 00:00 in Chicago

func createLeases(t *testing.T, db *store.DB, ls ...*qm.Lease) {
	t.Helper()
	if err := db.Update(t.Context(), nil, func(tx qm.Tx) error {
		for _, l := range ls {
			if err := tx.CreateLease(t.Context(), l); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A week's leases are those created before its end that had not ended before its start, of every kind.
func TestReportLeasesAreThoseThatCanCountInTheWeek(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		h := func(n int) time.Time { return weekStart.Add(time.Duration(n) * time.Hour) }
		mk := func(team string, created, ended time.Time, kind qm.Kind) *qm.Lease {
			l := &qm.Lease{User: "a@x", Team: team, Class: "train", GPUs: 1, Kind: kind, State: qm.Active, CreatedAt: created, StartedAt: created, EndedAt: ended}
			if !ended.IsZero() {
				l.State = qm.Released
			}
			return l
		}
		before := mk("old", h(-100), h(-50), "")          // ended before: out
		across := mk("vision", h(-10), h(5), "")          // ended inside: in
		open := mk("vision", h(-300), time.Time{}, "")    // still open: in
		quota := mk("vision", h(3), time.Time{}, "quota") // a quota increase: in
		after := mk("vision", h(170), time.Time{}, "")    // created after the week: out
		open.GPUs, open.Connection = 4, qm.ConnectionIsland
		createLeases(t, db, before, across, open, quota, after)
		got, err := db.ReportLeases(t.Context(), weekStart, weekStart.Add(168*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		var ids []qm.LeaseID
		for _, l := range got {
			ids = append(ids, l.ID)
		}
		want := []qm.LeaseID{across.ID, open.ID, quota.ID}
		if len(ids) != 3 || ids[0] != want[0] || ids[1] != want[1] || ids[2] != want[2] {
			t.Fatalf("ReportLeases = %v, want %v", ids, want)
		}
		if got[2].Kind != qm.KindQuota || !got[0].EndedAt.Equal(h(5)) || got[0].Team != "vision" || got[1].Connection != qm.ConnectionIsland {
			t.Errorf("fields lost on the way: %+v", got[0])
		}
	})
}

// Each team's first request for GPUs (a workspace with GPUs: not a quota increase nor a CPU-only
// job) and first start of one; the history's start; the teams there are.
func TestTeamFirsts(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		if start, err := db.HistoryStart(ctx); err != nil || !start.IsZero() {
			t.Fatalf("an empty database's history starts at %v (%v)", start, err)
		}
		a := &qm.Lease{User: "a@x", Team: "vision", Class: "train", GPUs: 1, State: qm.PendingApproval, CreatedAt: weekStart}
		b := &qm.Lease{User: "a@x", Team: "vision", Class: "train", GPUs: 1, State: qm.Active, CreatedAt: weekStart.Add(time.Hour), StartedAt: weekStart.Add(2 * time.Hour)}
		q := &qm.Lease{User: "a@x", Team: "vision", Kind: qm.KindQuota, Class: "train", GPUs: 1, State: qm.Active, CreatedAt: weekStart.Add(-time.Hour), StartedAt: weekStart.Add(-time.Hour)}
		c := &qm.Lease{User: "n@x", Team: "robotics", Class: "train", GPUs: 1, State: qm.Queued, CreatedAt: weekStart.Add(3 * time.Hour)}
		cpu := &qm.Lease{User: "n@x", Team: "robotics", Class: "train", State: qm.Active, CreatedAt: weekStart.Add(-2 * time.Hour), StartedAt: weekStart.Add(-2 * time.Hour)}
		createLeases(t, db, a, b, q, c, cpu)
		// vision asked for quota before the week and for GPUs in it; robotics ran a CPU-only job
		// before the week and asked for GPUs in it.
		if fs, err := db.TeamFirsts(ctx, []string{"robotics", "vision"}, weekStart); err != nil || len(fs) != 2 || fs[0].Team != "robotics" || fs[1].Team != "vision" {
			t.Fatalf("teams new since the week's start = %+v, %v; want robotics and vision (both first asked for GPUs in it)", fs, err)
		}
		if fs, err := db.TeamFirsts(ctx, []string{"robotics", "vision"}, weekStart.Add(3*time.Hour)); err != nil || len(fs) != 1 || fs[0].Team != "robotics" {
			t.Fatalf("teams new since 3h = %+v, %v; want robotics alone", fs, err)
		}
		fs, err := db.TeamFirsts(ctx, []string{"robotics", "vision", "nobody"}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) != 2 || fs[0].Team != "robotics" || !fs[0].FirstRequest.Equal(weekStart.Add(3*time.Hour)) || !fs[0].FirstStart.IsZero() || fs[1].Team != "vision" ||
			!fs[1].FirstRequest.Equal(weekStart) || !fs[1].FirstStart.Equal(weekStart.Add(2*time.Hour)) {
			t.Fatalf("TeamFirsts = %+v; want robotics (asked for GPUs at 3h, its CPU-only job not counted, not started) and vision (asked for GPUs at 0h, not for quota at -1h; first workspace at 2h)", fs)
		}
		// A team's first login is kept once: a later one does not move it.
		if err := db.NoteTeamLogins(ctx, []string{"robotics"}, weekStart.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := db.NoteTeamLogins(ctx, []string{"robotics", "vision"}, weekStart.Add(5*time.Hour)); err != nil {
			t.Fatal(err)
		}
		fs, err = db.TeamFirsts(ctx, []string{"robotics", "vision"}, time.Time{})
		if err != nil || len(fs) != 2 || !fs[0].FirstLogin.Equal(weekStart.Add(time.Hour)) || !fs[1].FirstLogin.Equal(weekStart.Add(5*time.Hour)) {
			t.Fatalf("first logins = %+v, %v; want robotics at 1h (not 5h) and vision at 5h", fs, err)
		}
		if c := fs[0].Contact(); !c.Equal(weekStart.Add(time.Hour)) {
			t.Errorf("robotics signed in (1h) before it asked (3h), yet its first contact is %v", c)
		}
		if c := fs[1].Contact(); !c.Equal(weekStart) {
			t.Errorf("vision asked for GPUs (0h) before it signed in (5h), yet its first contact is %v", c)
		}
		if start, err := db.HistoryStart(ctx); err != nil || !start.Equal(weekStart.Add(-2*time.Hour)) {
			t.Fatalf("history starts at %v (%v)", start, err)
		}
		if teams, err := db.LeaseTeams(ctx); err != nil || strings.Join(teams, ",") != "robotics,vision" {
			t.Fatalf("LeaseTeams = %v, %v", teams, err)
		}
	})
}

// A lease keeps its first prediction; the week's predictions are those of leases that started in it.
func TestWaitPredictionsKeepTheFirst(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		in := &qm.Lease{User: "a@x", Team: "vision", Class: "train", GPUs: 1, State: qm.Active, CreatedAt: weekStart, StartedAt: weekStart.Add(time.Hour)}
		out := &qm.Lease{User: "a@x", Team: "vision", Class: "train", GPUs: 1, State: qm.Queued, CreatedAt: weekStart}
		createLeases(t, db, in, out)
		ctx := t.Context()
		if err := db.AddWaitPredictions(ctx, []qm.WaitPrediction{{Lease: in.ID, Median: time.Hour, P90: 2 * time.Hour, At: weekStart},
			{Lease: out.ID, Median: time.Minute, P90: time.Minute, At: weekStart}}); err != nil {
			t.Fatal(err)
		}
		if err := db.AddWaitPredictions(ctx, []qm.WaitPrediction{{Lease: in.ID, Median: 5 * time.Hour, P90: 9 * time.Hour, At: weekStart.Add(time.Minute)}}); err != nil {
			t.Fatal(err)
		}
		got, err := db.WaitPredictions(ctx, weekStart, weekStart.Add(168*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Lease != in.ID || got[0].Median != time.Hour || got[0].P90 != 2*time.Hour {
			t.Fatalf("WaitPredictions = %+v, want only %s's first (1h, 2h)", got, in.ID)
		}
	})
}

// One replica holds a week at a time: a claim stands until it runs out or the week is posted; a
// replica that lost its claim cannot record or finish anything; a posted week is never claimed again.
func TestClaimingAWeek(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		now := weekStart.Add(7*24*time.Hour + 15*time.Hour)
		ttl := 15 * time.Minute
		claim := func(owner string, at time.Time) bool {
			t.Helper()
			ok, err := db.ClaimWeek(ctx, "2026-W48", owner, at, ttl)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if !claim("a", now) {
			t.Fatal("a could not claim a week nobody had")
		}
		if last, err := db.LastPostedWeek(ctx); err != nil || last != "" {
			t.Fatalf("LastPostedWeek with a week claimed and none posted = %q, %v", last, err)
		}
		if claim("b", now.Add(time.Minute)) {
			t.Fatal("b claimed a week a holds")
		}
		if claim("a", now.Add(time.Minute)) {
			t.Fatal("a second run of a claimed the week a already holds")
		}
		if err := db.MarkDelivered(ctx, "2026-W48", "a", "channel:#gpu-showback", now.Add(time.Minute), ttl); err != nil {
			t.Fatal(err)
		}
		// a's claim was extended by the delivery: b must wait until 15 minutes after it.
		if claim("b", now.Add(15*time.Minute)) {
			t.Fatal("b claimed the week while a's extended claim still ran")
		}
		if !claim("b", now.Add(16*time.Minute)) {
			t.Fatal("b could not take over a claim that ran out")
		}
		if err := db.MarkDelivered(ctx, "2026-W48", "a", "dm:dana@acme.example", now.Add(17*time.Minute), ttl); !errors.Is(err, store.ErrLostClaim) {
			t.Fatalf("a recorded a delivery after losing the week: %v", err)
		}
		if err := db.FinishWeek(ctx, "2026-W48", "a", now.Add(17*time.Minute)); !errors.Is(err, store.ErrLostClaim) {
			t.Fatalf("a finished a week it lost: %v", err)
		}
		done, err := db.WeekDeliveries(ctx, "2026-W48")
		if err != nil || len(done) != 1 || done[0] != "channel:#gpu-showback" {
			t.Fatalf("deliveries = %v, %v; want only a's channel post", done, err)
		}
		if err := db.MarkDelivered(ctx, "2026-W48", "b", "dm:dana@acme.example", now.Add(17*time.Minute), ttl); err != nil {
			t.Fatal(err)
		}
		if err := db.FinishWeek(ctx, "2026-W48", "b", now.Add(18*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if claim("a", now.Add(48*time.Hour)) || claim("b", now.Add(48*time.Hour)) {
			t.Fatal("a posted week was claimed again")
		}
		if at, err := db.PostedWeek(ctx, "2026-W48"); err != nil || !at.Equal(now.Add(18*time.Minute)) {
			t.Fatalf("PostedWeek = %v, %v", at, err)
		}
		// A released claim is free at once.
		if ok, err := db.ClaimWeek(ctx, "2026-W49", "a", now, ttl); err != nil || !ok {
			t.Fatalf("a could not claim W49: %v", err)
		}
		if err := db.ReleaseWeek(ctx, "2026-W49", "a"); err != nil {
			t.Fatal(err)
		}
		if ok, err := db.ClaimWeek(ctx, "2026-W49", "b", now.Add(time.Second), ttl); err != nil || !ok {
			t.Fatalf("b could not claim W49 after a released it: %v", err)
		}
		// The last week posted is the latest one posted in full, not a later one only claimed,
		// nor an earlier one posted after it (a catch-up).
		if ok, err := db.ClaimWeek(ctx, "2026-W47", "a", now, ttl); err != nil || !ok {
			t.Fatalf("a could not claim W47: %v", err)
		}
		if err := db.FinishWeek(ctx, "2026-W47", "a", now.Add(20*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if last, err := db.LastPostedWeek(ctx); err != nil || last != "2026-W48" {
			t.Fatalf("LastPostedWeek = %q, %v; want 2026-W48", last, err)
		}
	})
}

// Many replicas claiming one week at the same moment: exactly one gets it.
func TestOneOfManySimultaneousClaimsWins(t *testing.T) {
	storetest.RequirePostgres(t)
	url := storetest.Postgres(t)
	var dbs []*store.DB
	for range 3 {
		dbs = append(dbs, storetest.Open(t, url))
	}
	now := weekStart.Add(8 * 24 * time.Hour)
	for round := range 5 {
		week := "2026-W4" + string(rune('0'+round))
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for i := range 12 {
			db := dbs[i%3]
			wg.Go(func() {
				ok, err := db.ClaimWeek(context.Background(), week, string(rune('a'+i)), now, time.Minute)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					won++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("%s: %d of 12 simultaneous claims won, want 1", week, won)
		}
	}
}

// A job lock is held by one replica at a time, and goes away when its holder's connections do.
func TestJobLockIsSharedByReplicas(t *testing.T) {
	storetest.RequirePostgres(t)
	url := storetest.Postgres(t)
	a, b := storetest.Open(t, url), storetest.Open(t, url)
	ctx := t.Context()
	release, ok, err := a.TryJobLock(ctx, "showback")
	if err != nil || !ok {
		t.Fatalf("a: %v %v", ok, err)
	}
	if _, ok, err := b.TryJobLock(ctx, "showback"); err != nil || ok {
		t.Fatalf("b took a lock a holds: %v %v", ok, err)
	}
	if _, ok, err := b.TryJobLock(ctx, "another"); err != nil || !ok {
		t.Fatalf("b could not take another job's lock: %v %v", ok, err)
	}
	if err := release(ctx); err != nil {
		t.Fatal(err)
	}
	relB, ok, err := b.TryJobLock(ctx, "showback")
	if err != nil || !ok {
		t.Fatalf("b could not take the released lock: %v %v", ok, err)
	}
	_ = relB
	// b dies holding it: its connections close, and a can take it.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, ok, err := a.TryJobLock(ctx, "showback")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lock outlived the replica that held it")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A week's predictions also hold those of the queued leases that left the queue in it without
// starting, which the showback scores as right-censored; a lease still queued has none yet.
func TestWaitPredictionsOfLeasesThatLeftTheQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		left := &qm.Lease{User: "a@x", Team: "vision", Class: "train", GPUs: 1, State: qm.Cancelled, CreatedAt: weekStart, EndedAt: weekStart.Add(5 * time.Hour)}
		before := &qm.Lease{User: "a@x", Team: "vision", Class: "train", GPUs: 1, State: qm.Cancelled, CreatedAt: weekStart.Add(-9 * time.Hour), EndedAt: weekStart.Add(-time.Hour)}
		waiting := &qm.Lease{User: "a@x", Team: "vision", Class: "train", GPUs: 1, State: qm.Queued, CreatedAt: weekStart}
		createLeases(t, db, left, before, waiting)
		ctx := t.Context()
		var ps []qm.WaitPrediction
		for _, l := range []*qm.Lease{left, before, waiting} {
			ps = append(ps, qm.WaitPrediction{Lease: l.ID, Median: 2 * time.Hour, P90: 4 * time.Hour, At: l.CreatedAt})
		}
		if err := db.AddWaitPredictions(ctx, ps); err != nil {
			t.Fatal(err)
		}
		got, err := db.WaitPredictions(ctx, weekStart, weekStart.Add(168*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Lease != left.ID || got[0].P90 != 4*time.Hour {
			t.Fatalf("WaitPredictions = %+v, want only %s's (left the queue in the week)", got, left.ID)
		}
	})
}

// A team whose first request came before the week but whose first workspace started in it is
// new in the week too: its time to first GPU is known only then. A team that had a workspace
// before the week is not.
func TestTeamFirstsOfATeamWhoseFirstStartIsInTheWeek(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		late := &qm.Lease{User: "r@x", Team: "robotics", Class: "train", GPUs: 1, State: qm.Active, CreatedAt: weekStart.Add(-9 * time.Hour), StartedAt: weekStart.Add(10 * time.Hour)}
		failed := &qm.Lease{User: "r@x", Team: "robotics", Class: "train", GPUs: 1, State: qm.Failed, CreatedAt: weekStart.Add(-30 * time.Hour), EndedAt: weekStart.Add(-29 * time.Hour)}
		old := &qm.Lease{User: "a@x", Team: "vision", Class: "train", GPUs: 1, State: qm.Released, CreatedAt: weekStart.Add(-50 * time.Hour), StartedAt: weekStart.Add(-50 * time.Hour), EndedAt: weekStart.Add(-40 * time.Hour)}
		again := &qm.Lease{User: "a@x", Team: "vision", Class: "train", GPUs: 1, State: qm.Active, CreatedAt: weekStart.Add(time.Hour), StartedAt: weekStart.Add(time.Hour)}
		createLeases(t, db, late, failed, old, again)
		fs, err := db.TeamFirsts(ctx, []string{"robotics", "vision"}, weekStart)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) != 1 || fs[0].Team != "robotics" || !fs[0].FirstRequest.Equal(failed.CreatedAt) || !fs[0].FirstStart.Equal(late.StartedAt) {
			t.Fatalf("TeamFirsts = %+v; want robotics alone, first asked at -30h (the failed lease), first started at 10h", fs)
		}
	})
}

// The last change the database records is the latest of where a simulated clock last stood and
// when a showback week was posted; a clock noted earlier than one noted before moves nothing back.
func TestHistoryEndCountsTheClockAndPostedWeeks(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		end := func(want time.Time) {
			t.Helper()
			if got, err := db.HistoryEnd(ctx); err != nil || !got.Equal(want) {
				t.Fatalf("HistoryEnd = %v, %v; want %v", got, err, want)
			}
		}
		end(time.Time{})
		at := weekStart.Add(3*time.Hour + 30*time.Second + 250*time.Microsecond)
		if err := db.NoteClock(ctx, at); err != nil {
			t.Fatal(err)
		}
		end(at)
		if err := db.NoteClock(ctx, at.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		end(at)
		posted := at.Add(26 * time.Hour)
		if ok, err := db.ClaimWeek(ctx, "2026-W48", "a", posted.Add(-time.Minute), time.Minute*15); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		if err := db.FinishWeek(ctx, "2026-W48", "a", posted); err != nil {
			t.Fatal(err)
		}
		end(posted)
		if err := db.NoteClock(ctx, posted.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		end(posted.Add(time.Minute))
	})
}
