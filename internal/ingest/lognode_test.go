package ingest_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/config"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// A report sent with another node's token is logged naming both nodes, through the service's own
// logger, which hides the values of attributes named like a secret: the node a token belongs to is
// no secret, and the operator needs it to find the agent started with the wrong --node or token.
func TestAReportWithAnotherNodesTokenLogsBothNodes(t *testing.T) {
	var logged bytes.Buffer
	logger, err := config.NewLogger(&logged, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: storetest.Open(t, storetest.SQLite(t)), clock: sim.NewClock(t0), tokens: map[string]string{}}
	e.ing = ingest.New(ingest.Config{Store: e.db, Clock: e.clock, IdleBelow: 5, Logger: logger,
		Leases: func(context.Context) ([]*qm.Lease, error) { return nil, nil }})
	e.serve(t, "kelp-07")
	tok := e.tokens["kelp-07"]
	r := e.rep(report.GPU{Index: 0, UUID: "GPU-0"})
	r.Node = "kelp-08"
	if code, out := e.post(tok, r); code != http.StatusForbidden {
		t.Fatalf("status %d (%v), want 403", code, out)
	}
	line := logged.String()
	if !strings.Contains(line, "a report named another node than its token's") {
		t.Fatalf("nothing logged about the wrong node: %s", line)
	}
	for _, want := range []string{`"kelp-07"`, `"kelp-08"`} {
		if !strings.Contains(line, want) {
			t.Errorf("the log does not name %s: %s", want, line)
		}
	}
	if strings.Contains(line, "[redacted]") {
		t.Errorf("the log hides a node's name: %s", line)
	}
}
