package qm_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// liveRefs is the simulated cluster, counting the workspaces it runs.
type liveRefs struct {
	*sim.Cluster
	mu   sync.Mutex
	live map[string]bool
}

func (b *liveRefs) Start(ctx context.Context, l *qm.Lease) (qm.Started, error) {
	st, err := b.Cluster.Start(ctx, l)
	if err == nil {
		b.mu.Lock()
		b.live[st.Ref] = true
		b.mu.Unlock()
	}
	return st, err
}

func (b *liveRefs) Stop(ctx context.Context, l *qm.Lease) error {
	b.mu.Lock()
	delete(b.live, l.Ref)
	b.mu.Unlock()
	return b.Cluster.Stop(ctx, l)
}

// lateKeys is a store whose next look-ups of a request key outside a change miss, as when a
// second press of a button is checked before the first press's lease is committed.
type lateKeys struct {
	qm.Store
	misses atomic.Int32
}

type lateTx struct {
	qm.Tx
	s *lateKeys
}

func (s *lateKeys) View(ctx context.Context, fn func(qm.Tx) error) error {
	return s.Store.View(ctx, func(tx qm.Tx) error { return fn(lateTx{tx, s}) })
}

func (tx lateTx) LeaseByRequestKey(ctx context.Context, key string) (*qm.Lease, error) {
	if tx.s.misses.Add(-1) >= 0 {
		return nil, qm.ErrNotFound
	}
	return tx.Tx.LeaseByRequestKey(ctx, key)
}

// TestASecondPressStartsNoWorkspace: a second press of the same button that reaches admission
// before the first press's lease is committed makes no second lease, and leaves no simulated
// workspace running that belongs to no lease (it held GPUs no lease accounts for).
func TestASecondPressStartsNoWorkspace(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.SQLite(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := manyTeamsPolicy(t, 1, "")
	clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
	cl := sim.New(p, clock)
	be := &liveRefs{Cluster: cl, live: map[string]bool{}}
	st := &lateKeys{Store: db}
	svc := &qm.Service{Policy: p, Store: st, Clock: clock, Backend: be, Telemetry: cl, Directory: p}

	r := qm.LeaseRequest{User: "u00@x.example", GPUs: 1, Class: "interactive", Duration: time.Hour, RequestKey: "slack:click:abc"}
	first, err := svc.Request(ctx, r)
	if err != nil || first.Lease.State != qm.Active {
		t.Fatalf("first press: %+v %v", first, err)
	}
	st.misses.Store(1)
	second, err := svc.Request(ctx, r)
	if err != nil || !second.Duplicate || second.Lease.ID != first.Lease.ID {
		t.Fatalf("second press: %+v %v; want the first press's lease %s", second, err, first.Lease.ID)
	}
	if len(be.live) != 1 || !be.live[first.Lease.Ref] {
		t.Errorf("workspaces running: %v; want only %s's (%s)", be.live, first.Lease.ID, first.Lease.Ref)
	}
}
