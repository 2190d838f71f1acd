package ingest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// A report claiming a longer interval than any agent runs with (interval_s 3600, where --interval
// stops at 10 minutes) stands for 10 minutes: the node's silence is noticed as it would be for an
// agent on --interval 10m (after 30 minutes), not three hours later.
func TestAnIntervalLongerThanAnyAgentsDoesNotHideASilentNode(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newIdleEnv(t, url)
		l := e.start()
		e.report(l, e.clock.Now(), time.Hour, 80)
		for range 80 { // 40 minutes of silence
			e.clock.Advance(30 * time.Second)
			e.tick()
		}
		if n := e.notes.Of(qm.NoticeTelemetryMissing, l.ID); len(n) != 1 {
			t.Errorf("a node silent for 40 minutes after a report claiming a 1-hour interval: %d notices to the platform channel, want 1", len(n))
		}
	})
}

// A report dated centuries ahead is refused saying how far ahead it is in years, not as the
// largest duration Go can hold (2562047h47m16s, about 292 years, whatever the date).
func TestAReportDatedCenturiesAheadSaysHowFar(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), "7972 years ahead"}, // the service's clock is 2026-11-30
		{time.Date(2400, 12, 31, 0, 0, 0, 0, time.UTC), "374 years ahead"},
		{t0.Add(3 * time.Hour), "3h0m0s ahead"},
	} {
		r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(75)})
		r.At = c.at
		code, out := e.post(e.tokens["n1"], r)
		if msg, _ := out["error"].(string); code != 422 || !strings.Contains(msg, c.want) || strings.Contains(msg, "2562047h") {
			t.Errorf("a report dated %s: %d %q; want 422 saying %q", c.at.Format(time.DateOnly), code, msg, c.want)
		}
	}
}

// A token revoked moments ago (the service trusts a checked token for a few seconds) is refused as
// revoked (401, naming the command that makes a new one), not as another node's GPUs with advice to
// revoke that node, which has done nothing wrong.
func TestARevokedTokenIsRefusedAsRevokedNotAsAnotherNodesGPUs(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	gpus := func() report.Report {
		r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(50)}, report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
		r.Run = "r1"
		return r
	}
	e.accept(e.tokens["n1"], gpus()) // n1's token is checked, and trusted for a while
	if err := e.db.RevokeAgentToken(t.Context(), "n1", t0); err != nil {
		t.Fatal(err)
	}
	moved := gpus() // the machine now reports as n2
	moved.Node, moved.Run = "n2", "r2"
	e.accept(e.tokens["n2"], moved)
	again := gpus()
	again.Seq = 2
	code, out := e.post(e.tokens["n1"], again)
	if msg, _ := out["error"].(string); code != 401 || !strings.Contains(msg, "unknown or revoked") || strings.Contains(msg, "revoke n2") {
		t.Errorf("the revoked n1 token: %d %q; want 401 saying it is revoked", code, msg)
	}
}
