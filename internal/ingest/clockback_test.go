package ingest_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// A node whose clock ran 10 minutes ahead and is then set back (an NTP step) keeps being heard:
// its next report, dated before the last by its own clock, is taken and keeps its lease busy,
// instead of being ignored as replayed until the clock passes the last report's time. The same
// report sent again (a lost answer) is still ignored once as replayed; so is one of the agent's
// earlier run after it restarted, while the new run's reports, numbered from 1 again, are taken.
func TestReportsAfterTheNodesClockIsSetBackKeepTheLeaseBusy(t *testing.T) {
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			l := &qm.Lease{ID: 4, State: qm.Active, GPUs: 1, Ref: "8812", Node: "n1"}
			e := newEnv(t, url(t), l)
			busy := func(run string, seq uint64, nodeNow time.Time) report.Report {
				r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(88), Processes: []report.Process{{PID: 9, Job: "8812"}}},
					report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
				r.Run, r.Seq, r.At = run, seq, nodeNow
				return r
			}
			e.clock.Advance(time.Hour)
			ahead := busy("5e1f", 1, e.clock.Now().Add(10*time.Minute))
			if code, out := e.postSent(e.tokens["n1"], ahead, ahead.At); code != 200 || out["accepted"] != true {
				t.Fatalf("a report 10 minutes ahead: %d %v", code, out)
			}
			e.clock.Advance(15 * time.Second)
			now := e.clock.Now()
			back := busy("5e1f", 2, now) // the clock is right again
			if code, out := e.postSent(e.tokens["n1"], back, now); code != 200 || out["accepted"] != true {
				t.Fatalf("the report after the clock was set back: %d %v; want it taken", code, out)
			}
			if a, ok := (ingest.Telemetry{Store: e.db}).Activity(t.Context(), l); !ok || !a.Seen.Equal(now) || !a.LastActive.Equal(now) {
				t.Errorf("the lease: %+v %v; want seen and busy at %s", a, ok, now)
			}
			e.clock.Advance(2 * time.Second)
			if _, out := e.postSent(e.tokens["n1"], back, e.clock.Now()); out["ignored"] != ingest.Replayed {
				t.Errorf("the same report sent again: %v; want it ignored as replayed", out)
			}
			e.clock.Advance(time.Minute)
			restarted := busy("77ab", 1, e.clock.Now())
			if _, out := e.postSent(e.tokens["n1"], restarted, e.clock.Now()); out["accepted"] != true {
				t.Errorf("the first report of the restarted agent: %v; want it taken", out)
			}
			if _, out := e.postSent(e.tokens["n1"], back, e.clock.Now()); out["ignored"] != ingest.Replayed {
				t.Errorf("the earlier run's report sent again after the restart: %v; want it ignored as replayed", out)
			}
			if c := e.ing.Counts(); c[ingest.Accepted] != 3 || c[ingest.Replayed] != 2 {
				t.Errorf("counts: accepted %d, replayed %d; want 3 and 2", c[ingest.Accepted], c[ingest.Replayed])
			}
		})
	}
}

// A report's run is the agent's word: a run that is no short id is refused in one sentence.
func TestAReportsRunMustBeAShortID(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(10)})
	r.Run = "no spaces/or slashes"
	code, out := e.post(e.tokens["n1"], r)
	if msg, _ := out["error"].(string); code != 400 || msg == "" {
		t.Errorf("a report with run %q: %d %v; want 400 saying why", r.Run, code, out)
	}
}

// A proxy that sends a report again exactly as it first came, its Quartermaster-Sent-At too, a
// day or a week later, when the service has forgotten the report's raw sample: the report is not
// taken again (it would read as the report of a node whose clock is that far behind, and keep its
// lease busy now). It is ignored as too_old: older than what the service keeps of the node's
// reports. The agent's later reports of the same run are taken, and so is a new run's first; so
// is a report from an older agent, without a run, once; its resend a day later is too_old too.
func TestAReportSentAgainIdenticallyADayLaterIsNotTaken(t *testing.T) {
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			l := &qm.Lease{ID: 4, State: qm.Active, GPUs: 1, Ref: "8812", Node: "n1"}
			e := newEnv(t, url(t), l)
			busy := func(run string, seq uint64) report.Report {
				r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(88), Processes: []report.Process{{PID: 9, Job: "8812"}}},
					report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
				r.Run, r.Seq, r.At = run, seq, e.clock.Now()
				return r
			}
			idle := func(run string, seq uint64) report.Report {
				r := busy(run, seq)
				r.GPUs[0].Util = f(0)
				return r
			}
			e.clock.Advance(time.Hour)
			type sent struct {
				r  report.Report
				at time.Time // its Quartermaster-Sent-At
			}
			var first []sent
			for _, run := range []string{"5e1f", ""} {
				first = append(first, sent{busy(run, 1), e.clock.Now()})
				if code, out := e.postSent(e.tokens["n1"], first[len(first)-1].r, e.clock.Now()); code != 200 || out["accepted"] != true {
					t.Fatalf("the first report (run %q): %d %v", run, code, out)
				}
				e.clock.Advance(time.Second)
			}
			lastBusy := first[1].at
			for _, later := range []time.Duration{25 * time.Hour, 7 * 24 * time.Hour} {
				e.clock.Advance(later)
				if _, err := e.ing.Prune(t.Context()); err != nil {
					t.Fatal(err)
				}
				e.clock.Advance(10 * time.Second)
				seq := uint64(later / time.Second) // the agent has run on meanwhile
				if code, out := e.postSent(e.tokens["n1"], idle("5e1f", seq), e.clock.Now()); code != 200 || out["accepted"] != true {
					t.Fatalf("the agent's report %d of the same run: %d %v", seq, code, out)
				}
				e.clock.Advance(10 * time.Second)
				for _, s := range first {
					if code, out := e.postSent(e.tokens["n1"], s.r, s.at); code != 200 || out["ignored"] != ingest.TooOld {
						t.Errorf("the first report (run %q) sent again as it was, %s later: %d %v; want it ignored as %s", s.r.Run, later, code, out, ingest.TooOld)
					}
				}
				if a, ok := (ingest.Telemetry{Store: e.db}).Activity(t.Context(), l); !ok || !a.LastActive.Equal(lastBusy) {
					t.Errorf("the lease after the resend %s later: %+v %v; want last busy at %s, when the reports first came", later, a, ok, lastBusy)
				}
			}
			if code, out := e.postSent(e.tokens["n1"], idle("9c3d", 1), e.clock.Now()); code != 200 || out["accepted"] != true {
				t.Errorf("a restarted agent's first report: %d %v; want it taken", code, out)
			}
			if c := e.ing.Counts(); c[ingest.TooOld] != 4 || c[ingest.ClockOff] != 0 {
				t.Errorf("counts: too_old %d, clock_off %d; want 4 and none (the resends do not say the node's clock is off)", c[ingest.TooOld], c[ingest.ClockOff])
			}
		})
	}
}
