package ingest_test

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
)

// syncBuf is a log written by the handler's goroutines and read by the test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A node whose clock reads the year 9999 and says so when it sends its reports: the service takes
// them, and the skew it answers (clock_skew_s), logs and keeps for agent-token list is the real
// one, 7972 years ahead, not the largest duration Go holds (2562047h47m16s, about 292 years).
func TestAClockCenturiesAheadIsMeasuredWithoutOverflow(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newEnv(t, url, &qm.Lease{ID: 1, State: qm.Active, GPUs: 1, Ref: "4711", Node: "n1"})
		var logs syncBuf
		e.ing = ingest.New(ingest.Config{Store: e.db, Clock: e.clock, IdleBelow: 5, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			Leases: func(context.Context) ([]*qm.Lease, error) { return e.leases, nil }})
		e.serve(t)

		nodeNow := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC) // the service's clock is 2026-11-30
		r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(80), Processes: []report.Process{{PID: 1, Job: "4711"}}})
		r.At = nodeNow
		code, out := e.postSent(e.tokens["n1"], r, nodeNow)
		if code != 200 || out["accepted"] != true {
			t.Fatalf("a report from a node at 9999: %d %v", code, out)
		}
		real := float64(nodeNow.Unix() - t0.Unix())
		if got, _ := out["clock_skew_s"].(float64); math.Abs(got-real) > 1 {
			t.Errorf("clock_skew_s = %v; want %v (not the %v a duration holds)", got, real, time.Duration(math.MaxInt64).Seconds())
		}
		if l := logs.String(); !strings.Contains(l, "7972 years") || strings.Contains(l, "2562047h") {
			t.Errorf("the log does not say the node's clock is 7972 years ahead:\n%s", l)
		}
		toks, err := e.db.AgentTokens(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range toks {
			if tok.Node == "n1" && (tok.ClockSkewSecs == nil || math.Abs(*tok.ClockSkewSecs-real) > 1) {
				t.Errorf("n1's kept clock skew = %v; want %v s", tok.ClockSkewSecs, real)
			}
		}
	})
}
