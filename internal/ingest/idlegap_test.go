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

// The owner of a lease warned as idle was told a time of reclaim; an agent outage during the grace
// moves it (the grace runs again from the agent's return). The owner hears the new time once, when
// the reports come back, with the lease still warned (Keep answers it), and the lease is reclaimed
// at that time, not earlier and not silently later. A second outage moves it again, and is told
// again, once.
func TestAnAgentOutageDuringTheGraceTellsTheOwnerTheNewReclaimTime(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newLabEnv(t, url)
		c, _ := e.svc.Policy.Class("multi")
		grace := qm.IdleGrace(c)
		l := e.start("multi", 1)
		for e.lease(l.ID).State == qm.Active && e.clock.Now().Before(t0.Add(time.Hour)) {
			e.report(l, gpu{f(0), 4 * gib})
			e.tick()
			e.minute()
		}
		if e.lease(l.ID).State != qm.IdleWarned {
			t.Fatalf("an idle lease is %s after an hour; want warned", e.lease(l.ID).State)
		}
		moved := func() []qm.Notice {
			var out []qm.Notice
			for _, n := range e.notes.Of(qm.NoticeReclaimMoved, l.ID) {
				if len(n.To) == 1 && n.To[0] == l.User {
					out = append(out, n)
				}
			}
			return out
		}
		for range 20 { // the agent is down past the time the warning named
			e.minute()
		}
		if n := moved(); len(n) != 0 {
			t.Fatalf("while the agent is down, the owner was told %d new reclaim times; there is none to tell yet", len(n))
		}
		back := e.clock.Now()
		e.report(l, gpu{f(0), 4 * gib})
		e.tick()
		n := moved()
		if len(n) != 1 {
			t.Fatalf("the agent is back: the owner was told %d new reclaim times, want 1", len(n))
		}
		at := n[0].Lease.WarnedAt.Add(grace)
		if !at.Equal(back.Add(grace)) {
			t.Errorf("the owner was told the lease is reclaimed at %s; want %s, the whole grace after the agent came back", at, back.Add(grace))
		}
		if got := e.lease(l.ID); got.State != qm.IdleWarned {
			t.Fatalf("after the new reclaim time was told the lease is %s; want still warned", got.State)
		}
		for e.clock.Now().Before(at) {
			e.minute()
			e.report(l, gpu{f(0), 4 * gib})
			e.tick()
			if got := e.lease(l.ID); got.State == qm.Reclaimed && e.clock.Now().Before(at) {
				t.Fatalf("reclaimed at %s, before the %s its owner was told", e.clock.Now(), at)
			}
		}
		if n := moved(); len(n) != 1 {
			t.Errorf("the owner was told the new reclaim time %d times; want once", len(n))
		}
		got := e.lease(l.ID)
		if got.State != qm.Reclaimed || !got.EndedAt.Equal(at) {
			t.Errorf("at the time its owner was told, the lease is %s (ended %s); want reclaimed at %s", got.State, got.EndedAt, at)
		}

		// Two outages in one grace: each new time is told once.
		l = e.start("multi", 1)
		for e.lease(l.ID).State == qm.Active && e.clock.Now().Before(got.EndedAt.Add(time.Hour)) {
			e.report(l, gpu{f(0), 4 * gib})
			e.tick()
			e.minute()
		}
		for k := range 2 {
			for range 20 {
				e.minute()
			}
			e.report(l, gpu{f(0), 4 * gib})
			e.tick()
			e.minute()
			e.report(l, gpu{f(0), 4 * gib})
			e.tick()
			if n := moved(); len(n) != k+1 {
				t.Errorf("after outage %d in the grace the owner was told %d new reclaim times; want %d", k+1, len(n), k+1)
			}
		}
		if _, err := e.svc.Keep(t.Context(), l.User, l.ID); err != nil {
			t.Errorf("keeping the lease after the new reclaim time was told: %v", err)
		}
		if got := e.lease(l.ID); got.State != qm.Active {
			t.Errorf("kept after the new reclaim time was told, the lease is %s; want active", got.State)
		}
	})
}
