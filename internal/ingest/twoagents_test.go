package ingest_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
)

// Two agents started on one node by mistake (a systemd unit and a DaemonSet pod, say) both report
// it, each as its own run: serve says so once, naming the node, so the operator stops one. An agent
// that restarts (its old run ends, a new one begins, a report of the old one perhaps still on its
// way) is no such thing and is not warned of.
func TestTwoAgentsReportingOneNodeAreToldOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		e := newEnv(t, url)
		var logs syncBuf
		e.ing = ingest.New(ingest.Config{Store: e.db, Clock: e.clock, IdleBelow: 5, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			Leases: func(context.Context) ([]*qm.Lease, error) {
				return []*qm.Lease{{ID: 1, State: qm.Active, GPUs: 1, Ref: "61", Node: "n2"}}, nil
			}})
		e.serve(t)
		seq := map[string]uint64{}
		send := func(node, run string) {
			t.Helper()
			seq[node+run]++
			r := e.rep(report.GPU{Index: 0, UUID: "GPU-0", Util: f(0)}, report.GPU{Index: 1, UUID: "GPU-1", Util: f(0)})
			r.Run, r.Seq = run, seq[node+run]
			ownGPUs(&r, node)
			code, out := e.post(e.tokens[node], r)
			if code != 200 || out["accepted"] != true {
				t.Fatalf("%s run %s: %d %v", node, run, code, out)
			}
			e.clock.Advance(5 * time.Second)
		}
		// n1's agent restarts: run 1a, then run 1b for good, with one report of 1a that was on its
		// way coming after 1b's first.
		for range 3 {
			send("n1", "1a")
		}
		send("n1", "1b")
		send("n1", "1a")
		for range 3 {
			send("n1", "1b")
		}
		// n2 has two agents, reporting in turn.
		for range 4 {
			send("n2", "2a")
			send("n2", "2b")
		}
		text := logs.String()
		if n := strings.Count(text, "node=n2"); n != 1 || !strings.Contains(text, "two agents") {
			t.Errorf("n2 with two agents: %d lines name it; want one saying two agents report it:\n%s", n, text)
		}
		if strings.Contains(text, "node=n1") {
			t.Errorf("n1, whose agent restarted, was warned of:\n%s", text)
		}
	})
}
