package ingest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// postSent posts r with token and the agent's sending time by the node's clock (none when
// sentAt is zero), and returns the status and the decoded answer.
func (e *env) postSent(token string, r report.Report, sentAt time.Time) (int, map[string]any) {
	e.t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+report.Path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	if !sentAt.IsZero() {
		req.Header.Set(report.SentAtHeader, sentAt.Format(time.RFC3339Nano))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// A node's clock may be off by any amount: its agent says its own time when it sends each report
// (Quartermaster-Sent-At), so the service places the report on its own clock, at the moment it
// came in less the time the report waited in the agent's outbox. A clock far ahead (10 minutes, a
// day) no longer loses the node's reports as future-dated, nor one far behind (2 days) as too
// old; the answer says how far off the clock is, and the outcome clock_off counts such reports.
func TestAReportIsPlacedByTheNodesClockSkew(t *testing.T) {
	for _, c := range []struct {
		name   string
		skew   time.Duration // the node's clock minus the service's
		queued time.Duration // how long the report waited in the agent's outbox
		off    bool          // more than 2 minutes off: counted clock_off
	}{
		{"10 minutes ahead", 10 * time.Minute, 0, true},
		{"a day ahead, queued 3 minutes", 24 * time.Hour, 3 * time.Minute, true},
		{"90 s ahead", 90 * time.Second, 0, false},
		{"5 minutes behind, queued 1 minute", -5 * time.Minute, time.Minute, true},
		{"2 days behind", -48 * time.Hour, 0, true},
		{"on time, queued 20 minutes", 0, 20 * time.Minute, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l := &qm.Lease{ID: 1, State: qm.Active, GPUs: 1, Ref: "7301", Node: "n1"}
			e := newEnv(t, storetest.SQLite(t), l)
			e.clock.Advance(time.Hour)
			now := e.clock.Now()
			nodeNow := now.Add(c.skew)
			r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(75), Processes: []report.Process{{PID: 1, Job: "7301"}}},
				report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
			r.At = nodeNow.Add(-c.queued)
			code, out := e.postSent(e.tokens["n1"], r, nodeNow)
			if code != 200 || out["accepted"] != true {
				t.Fatalf("a report from a node %s: %d %v", c.name, code, out)
			}
			want := now.Add(-c.queued)
			if a, ok := (ingest.Telemetry{Store: e.db}).Activity(t.Context(), l); !ok || !a.Seen.Equal(want) || !a.LastActive.Equal(want) {
				t.Errorf("the lease: %+v %v; want seen and active at %s, on the service's clock", a, ok, want)
			}
			if got, _ := out["clock_skew_s"].(float64); got != c.skew.Seconds() {
				t.Errorf("the answer says the clock is %v s off; want %v", out["clock_skew_s"], c.skew.Seconds())
			}
			counted := e.ing.Counts()[ingest.ClockOff]
			if (counted == 1) != c.off {
				t.Errorf("clock_off counted %d; want it counted: %v", counted, c.off)
			}
		})
	}
}

// Without the agent's sending time (an older agent), a report's own time cannot tell a clock
// ahead from a report that waited: one dated more than 2 minutes ahead is refused as before,
// saying to check the node's clock. So is one that says it was taken after it was sent.
func TestAReportFarAheadWithoutItsSendingTimeIsRefused(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(75)})
	r.At = e.clock.Now().Add(10 * time.Minute)
	for _, sentAt := range []time.Time{{}, r.At.Add(-5 * time.Minute)} {
		code, out := e.postSent(e.tokens["n1"], r, sentAt)
		if msg, _ := out["error"].(string); code != 422 || !strings.Contains(msg, "NTP") {
			t.Errorf("a report 10 minutes ahead, sent at %v: %d %v", sentAt, code, out)
		}
	}
	if c := e.ing.Counts(); c[ingest.Future] != 2 || c[ingest.Accepted] != 0 {
		t.Errorf("counts = %v", c)
	}
}
