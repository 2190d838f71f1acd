package store_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// replayEnv is node "edge-7" with a valid token, and a report maker: run and seq identify a
// report, at is the node's own time and seen its place on the service's clock.
func replayEnv(t *testing.T, url string) (*store.DB, func(run string, seq uint64, at, seen time.Time, util float64) store.AgentReport) {
	t.Helper()
	db := storetest.Open(t, url)
	if err := db.CreateAgentToken(t.Context(), "edge-7", "h7", time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	return db, func(run string, seq uint64, at, seen time.Time, util float64) store.AgentReport {
		return store.AgentReport{Node: "edge-7", TokenHash: "h7", Run: run, Seq: seq, At: at, Seen: seen, Received: seen, Interval: 15 * time.Second,
			GPUs: []byte(`[]`), Activity: []store.LeaseActivity{{Lease: 31, Utilization: util, Active: util >= 5}}}
	}
}

// record stores r and says whether it was taken (false: ignored as a replay).
func record(t *testing.T, db *store.DB, r store.AgentReport) bool {
	t.Helper()
	res, err := db.RecordAgentReport(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	return !res.Replayed
}

// A node whose clock ran 10 minutes ahead and is then set back (an NTP step) keeps reporting:
// its next reports, dated before its last one by its own clock, are new reports of the same run,
// not replays; the lease's activity follows them on the service's clock.
func TestReportsAfterTheNodesClockIsSetBackAreTaken(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db, rep := replayEnv(t, url)
		t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		ahead := 10 * time.Minute
		for k := range 3 {
			seen := t0.Add(time.Duration(k) * 15 * time.Second)
			if !record(t, db, rep("a1b2", uint64(k+1), seen.Add(ahead), seen, 80)) {
				t.Fatalf("report %d of a clock ahead was ignored", k+1)
			}
		}
		back := t0.Add(45 * time.Second) // the clock is right again
		if !record(t, db, rep("a1b2", 4, back, back, 0)) {
			t.Fatal("the first report after the clock was set back was ignored as a replay")
		}
		if !record(t, db, rep("a1b2", 5, back.Add(15*time.Second), back.Add(15*time.Second), 0)) {
			t.Fatal("the second report after the clock was set back was ignored as a replay")
		}
		if a, _, _ := db.Activity(t.Context(), 31); !a.Seen.Equal(back.Add(15*time.Second)) || !a.LastActive.Equal(t0.Add(30*time.Second)) {
			t.Errorf("lease 31 = %+v; want seen at %s, last active at %s", a, back.Add(15*time.Second), t0.Add(30*time.Second))
		}
		if n, _ := db.AgentSamples(t.Context(), "edge-7"); n != 5 {
			t.Errorf("%d samples, want 5", n)
		}
	})
}

// An agent that starts again begins a new run whose sequence starts at 1 again: its reports are
// taken even when the machine's clock came back from running ahead, and its seq 1 is no replay
// of the previous run's seq 1.
func TestAnAgentsNewRunIsNotAReplayOfTheLastOne(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db, rep := replayEnv(t, url)
		t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		record(t, db, rep("run-old", 1, t0.Add(time.Hour), t0, 90))
		record(t, db, rep("run-old", 2, t0.Add(time.Hour+15*time.Second), t0.Add(15*time.Second), 90))
		t1 := t0.Add(2 * time.Minute) // rebooted, the clock right again
		if !record(t, db, rep("run-new", 1, t1, t1, 0)) {
			t.Fatal("the new run's first report was ignored as a replay")
		}
		if !record(t, db, rep("run-new", 2, t1.Add(15*time.Second), t1.Add(15*time.Second), 0)) {
			t.Fatal("the new run's second report was ignored as a replay")
		}
		if record(t, db, rep("run-new", 1, t1, t1, 0)) {
			t.Error("the new run's first report, sent again, was taken twice")
		}
		if record(t, db, rep("run-old", 2, t0.Add(time.Hour+15*time.Second), t0.Add(15*time.Second), 90)) {
			t.Error("the old run's report, sent again after the new run began, was taken twice")
		}
		if n, _ := db.AgentSamples(t.Context(), "edge-7"); n != 4 {
			t.Errorf("%d samples, want 4", n)
		}
	})
}

// A report sent again (the agent's answer was lost, a proxy retried) is ignored, however its
// time falls and whether it comes alone or twice in one batch; it is stored once.
func TestAResentReportIsIgnoredOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db, rep := replayEnv(t, url)
		t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		r1 := rep("c3", 7, t0, t0, 60)
		if !record(t, db, r1) {
			t.Fatal("the first report was ignored")
		}
		again := r1
		again.Seen = t0.Add(2 * time.Second) // placed a little later: the transit time differed
		if record(t, db, again) {
			t.Error("the report sent again was taken")
		}
		r2 := rep("c3", 8, t0.Add(15*time.Second), t0.Add(15*time.Second), 60)
		res, err := db.RecordAgentReports(t.Context(), []store.AgentReport{r2, r2})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Replayed || !res[1].Replayed {
			t.Errorf("a report twice in one batch: %+v; want the first taken, the second a replay", res)
		}
		if n, _ := db.AgentSamples(t.Context(), "edge-7"); n != 2 {
			t.Errorf("%d samples, want 2", n)
		}
	})
}

// Reports that come out of order are each taken once: an earlier report that arrives after a
// later one is stored (it was never seen), without moving the lease's activity back; sent again,
// it is a replay.
func TestReportsOutOfOrderAreTakenOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db, rep := replayEnv(t, url)
		t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		t1 := t0.Add(15 * time.Second)
		if !record(t, db, rep("d4", 12, t1, t1, 0)) {
			t.Fatal("report 12 was ignored")
		}
		if !record(t, db, rep("d4", 11, t0, t0, 95)) {
			t.Fatal("report 11, arriving after 12, was ignored as a replay")
		}
		if record(t, db, rep("d4", 11, t0, t0, 95)) {
			t.Error("report 11 sent again was taken")
		}
		if a, _, _ := db.Activity(t.Context(), 31); !a.Seen.Equal(t1) || a.Utilization != 0 {
			t.Errorf("lease 31 = %+v; want report 12's (seen at %s, idle)", a, t1)
		}
		if n, _ := db.AgentSamples(t.Context(), "edge-7"); n != 2 {
			t.Errorf("%d samples, want 2", n)
		}
	})
}

// A report without a run (an older agent) is known by its node's own time: the same time again
// is a replay, and an earlier time (the clock set back) is a new report.
func TestAReportWithoutARunIsKnownByItsTime(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db, rep := replayEnv(t, url)
		t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		if !record(t, db, rep("", 40, t0.Add(10*time.Minute), t0, 50)) {
			t.Fatal("the first report was ignored")
		}
		if record(t, db, rep("", 40, t0.Add(10*time.Minute), t0.Add(time.Second), 50)) {
			t.Error("the same report again was taken")
		}
		if !record(t, db, rep("", 41, t0.Add(15*time.Second), t0.Add(15*time.Second), 0)) {
			t.Error("a report after the clock was set back was ignored as a replay")
		}
	})
}

// Raw samples are kept a day by the service's clock: a node whose clock is two days behind keeps
// its samples, so a report of it sent again is still known.
func TestSamplesOfAClockBehindAreKeptADay(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db, rep := replayEnv(t, url)
		now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
		r := rep("e5", 3, now.Add(-48*time.Hour), now, 70)
		if !record(t, db, r) {
			t.Fatal("the report was ignored")
		}
		if n, err := db.PruneAgentData(t.Context(), now.Add(-24*time.Hour), now.Add(-30*24*time.Hour)); err != nil || n != 0 {
			t.Fatalf("prune: %d, %v; want nothing forgotten (received now)", n, err)
		}
		if record(t, db, r) {
			t.Error("the report sent again after a prune was taken")
		}
	})
}
