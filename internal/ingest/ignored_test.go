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

// The answer to a report the service ignores says nothing of the node's clock: the report's
// sending time may be that of when it was first sent (a proxy repeating it, header and all, a
// day later), and the service measured nothing. An agent reading clock_skew_s from it would
// think its clock a day behind. The report taken still carries it.
func TestTheAnswerToAnIgnoredReportClaimsNoClockSkew(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newEnv(t, url)
		e.clock.Advance(time.Hour)
		first := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0)}, report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
		first.Run, first.Seq = "8b1e", 1
		sentAt := e.clock.Now().Add(3 * time.Second) // the node's clock 3 s ahead
		code, out := e.postSent(e.tokens["n1"], first, sentAt)
		if code != 200 || out["accepted"] != true || out["clock_skew_s"] != 3.0 {
			t.Fatalf("n1's report: %d %v; want it taken, its clock 3 s ahead", code, out)
		}
		resend := func(want string) {
			t.Helper()
			code, out := e.postSent(e.tokens["n1"], first, sentAt)
			if code != 200 || out["ignored"] != want {
				t.Fatalf("n1's report sent again at %s: %d %v; want it ignored as %s", e.clock.Now(), code, out, want)
			}
			if skew, ok := out["clock_skew_s"]; ok {
				t.Errorf("the answer to a report ignored as %s says the node's clock is %v s off; it measured nothing", want, skew)
			}
		}
		e.clock.Advance(20 * time.Hour)
		resend(ingest.Replayed)
		e.clock.Advance(5 * time.Hour)
		if _, err := e.ing.Prune(t.Context()); err != nil {
			t.Fatal(err)
		}
		resend(ingest.TooOld)
	})
}
