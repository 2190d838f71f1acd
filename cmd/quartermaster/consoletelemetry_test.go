package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
)

// On Slurm (or Kubernetes) every process of the service judges a lease's idleness from the node
// agents' reports its database holds, not only the serve that takes them: a console on the same
// database (or a replica without the ingest) warns of a lease whose GPUs the reports show idle
// for its class's idle_timeout, rather than telling the platform channel that it has no
// telemetry, again each time the other process saw the reports.
func TestEveryProcessOnASchedulerJudgesIdlenessFromTheAgentsReports(t *testing.T) {
	ctx := context.Background()
	a, err := NewApp(ctx, appOptions{flags: commonFlags{backend: "slurm", db: "sqlite:" + filepath.Join(t.TempDir(), "qm.db")}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st := a.Store
	now := time.Now().UTC()
	const node = "gpu-07"
	hash := ingest.HashToken("qma_test-token-of-gpu-07")
	if err := st.CreateAgentToken(ctx, node, hash, now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	// A workspace of the example policy's interactive class (idle_timeout 30m), running for 40m.
	l := &qm.Lease{Kind: qm.KindWorkspace, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, Duration: 4 * time.Hour,
		State: qm.Active, Node: node, Ref: "4242", CreatedAt: now.Add(-40 * time.Minute), StartedAt: now.Add(-40 * time.Minute),
		ExpiresAt: now.Add(-40 * time.Minute).Add(4 * time.Hour), Price: 0.90, Priced: true, DataClass: "public", Reason: "workspace ready"}
	if err := a.Store.Update(ctx, nil, func(tx qm.Tx) error {
		return tx.CreateLeaseWithEvents(ctx, l, []*qm.Event{{At: l.StartedAt, Actor: qm.SystemActor, To: qm.Active, Reason: "workspace ready"}})
	}); err != nil {
		t.Fatal(err)
	}
	// Its node's agent reported it idle every minute since it started.
	var rs []store.AgentReport
	for i := 39; i >= 0; i-- {
		at := now.Add(-time.Duration(i) * time.Minute)
		rs = append(rs, store.AgentReport{Node: node, TokenHash: hash, At: at, Run: "run-1", Seq: uint64(40 - i), Received: at,
			Interval: time.Minute, GPUs: []byte(`[]`), Activity: []store.LeaseActivity{{Lease: l.ID}}})
	}
	if _, err := st.RecordAgentReports(ctx, rs); err != nil {
		t.Fatal(err)
	}
	if err := a.Service.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := a.Service.Get(ctx, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != qm.IdleWarned {
		t.Errorf("a lease its agent reported idle for 40m of a 30m idle_timeout is %s (%s), want idle_warned", got.State, got.Reason)
	}
}
