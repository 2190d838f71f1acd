package ingest_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// A node agent that stops for 20 minutes and comes back: the platform channel hears once that
// the lease has no telemetry (not at every tick), and the 20 minutes nobody saw are not idle time:
// the idle period starts afresh when reports come back, so the owner of a notebook (idle_timeout
// 10m) idle before and after the outage is warned 10 minutes after the agent is back, not at its
// first report. An outage later in the lease's life is told again, once.
func TestAnAgentOutageIsNotIdleTime(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newLabEnv(t, url)
		l := e.start("nb", 1)
		for range 5 {
			e.report(l, gpu{f(0), 4 * gib})
			e.minute()
		}
		for range 20 { // the agent is down
			e.minute()
		}
		if n := e.notes.Of(qm.NoticeTelemetryMissing, l.ID); len(n) != 1 {
			t.Errorf("an agent silent for 20 minutes: %d notices to the platform channel, want 1", len(n))
		}
		for k := range 10 {
			e.report(l, gpu{f(0), 4 * gib})
			e.tick()
			if got := e.lease(l.ID); got.State != qm.Active {
				t.Fatalf("%d minutes after the agent came back the lease is %s; the 20 minutes without reports are not idle time", k, got.State)
			}
			e.minute()
		}
		e.report(l, gpu{f(0), 4 * gib})
		e.tick()
		if got := e.lease(l.ID); got.State != qm.IdleWarned {
			t.Errorf("idle for 10 minutes after the agent came back, the lease is %s; want warned", got.State)
		}
		if _, err := e.svc.Keep(t.Context(), "bo@lab.example", l.ID); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			e.report(l, gpu{f(60), 4 * gib})
			e.minute()
		}
		for range 30 { // down again
			e.minute()
		}
		if n := e.notes.Of(qm.NoticeTelemetryMissing, l.ID); len(n) != 2 {
			t.Errorf("a second outage: %d notices to the platform channel in all, want 2 (one per outage)", len(n))
		}
	})
}

// A lease warned as idle whose agent stops during the grace (multi: 5m) is not reclaimed for the
// minutes nobody saw: the platform channel is told, and when reports come back the lease is
// reclaimed only after it has been seen idle for the whole grace again.
func TestAnAgentOutageDuringTheGraceIsNotReclaimed(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newLabEnv(t, url)
		l := e.start("multi", 1)
		for e.lease(l.ID).State == qm.Active && e.clock.Now().Before(t0.Add(time.Hour)) {
			e.report(l, gpu{f(0), 4 * gib})
			e.tick()
			e.minute()
		}
		if e.lease(l.ID).State != qm.IdleWarned {
			t.Fatalf("an idle lease is %s after an hour; want warned", e.lease(l.ID).State)
		}
		for range 20 { // the agent stops right after the warning
			e.minute()
		}
		if n := e.notes.Of(qm.NoticeTelemetryMissing, l.ID); len(n) != 1 {
			t.Errorf("a warned lease whose agent is silent for 20 minutes: %d notices to the platform channel, want 1", len(n))
		}
		for k := range 4 {
			e.report(l, gpu{f(0), 4 * gib})
			e.tick()
			if got := e.lease(l.ID); got.State == qm.Reclaimed {
				t.Fatalf("reclaimed %d minutes after the agent came back, in a grace it never saw", k)
			}
			e.minute()
		}
		for range 3 {
			e.report(l, gpu{f(0), 4 * gib})
			e.tick()
			e.minute()
		}
		if got := e.lease(l.ID); got.State != qm.Reclaimed {
			t.Errorf("seen idle for the whole grace after the agent came back, the lease is %s; want reclaimed", got.State)
		}
	})
}

// An agent's first report of a lease comes up to an interval after the lease started: nothing
// went unseen before it, so the lease's idle period runs from its start, and a notebook idle from
// its start (idle_timeout 10m) is warned 10 minutes after it, not 10 minutes after that report.
func TestTheFirstReportAfterTheStartIsNoGap(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newLabEnv(t, url)
		l := e.start("nb", 1)
		for range 10 {
			e.minute()
			e.report(l, gpu{f(0), 4 * gib})
			e.tick()
		}
		if got := e.lease(l.ID); got.State != qm.IdleWarned {
			t.Errorf("seen idle from a minute after its start to 10 minutes after it, the lease is %s; want warned", got.State)
		}
	})
}
