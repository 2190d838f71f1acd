package ingest_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
)

// A proxy that keeps sending a dead node's old report again cannot keep the node counted as
// reporting: n1's agent sent one report and died. The report sent again while the service keeps
// it (replayed), and again after the service forgot it (too_old), moves neither when n1's last
// report came in (agent-token list's LAST REPORT) nor its claim on its GPUs: a day after n1's
// only report, n2's agent may list the GPUs moved there from n1.
func TestAnIgnoredReportDoesNotKeepANodeCountedAsReporting(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newEnv(t, url)
		e.clock.Advance(time.Hour)
		first := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0)}, report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
		first.Run, first.Seq = "4d2a", 1
		sentAt := e.clock.Now()
		if code, out := e.postSent(e.tokens["n1"], first, sentAt); code != 200 || out["accepted"] != true {
			t.Fatalf("n1's report: %d %v", code, out)
		}
		lastCame := e.clock.Now()

		resend := func(want string) {
			t.Helper()
			code, out := e.postSent(e.tokens["n1"], first, sentAt)
			if code != 200 || out["ignored"] != want {
				t.Fatalf("n1's report sent again at %s: %d %v; want it ignored as %s", e.clock.Now(), code, out, want)
			}
		}
		e.clock.Advance(23 * time.Hour)
		resend(ingest.Replayed)
		e.clock.Advance(2 * time.Hour)
		if _, err := e.ing.Prune(t.Context()); err != nil {
			t.Fatal(err)
		}
		resend(ingest.TooOld)

		ts, err := e.db.AgentTokens(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range ts {
			if tok.Node == "n1" && !tok.LastReceivedAt.Equal(lastCame) {
				t.Errorf("n1's last report came in at %s; want %s, when its only report taken came in", tok.LastReceivedAt, lastCame)
			}
		}
		// n1 has not been heard for more than a day: its GPUs moved to n2 are n2's to report.
		moved := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0)}, report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
		moved.Node = "n2"
		if code, out := e.post(e.tokens["n2"], moved); code != 200 || out["accepted"] != true {
			t.Errorf("n2 listing n1's GPUs a day after n1's last report, its resends aside: %d %v; want it taken", code, out)
		}
	})
}
