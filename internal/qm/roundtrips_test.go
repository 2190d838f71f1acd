package qm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestGrantOnPostgresTakesFiveRoundTrips: a grant on the sim backend is BEGIN, its locks, one read
// of the team's usage and the class's holdings, one write of the lease with its audit trail, and
// COMMIT; a request with a delivery key first looks for the lease the key made in a read-only
// transaction (three more), and a release is seven. Each round trip after the locks is time the
// class's admission lock is held.
func TestGrantOnPostgresTakesFiveRoundTrips(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, storetest.Postgres(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := manyTeamsPolicy(t, 4, "    - {name: big, count: 20, class: train, gpus: 8, nvlink_islands: 2}\n")
	svc := newService(t, p, st)
	for i := range 6 {
		key, want := "", int64(5)
		if i%2 == 1 {
			key, want = fmt.Sprintf("delivery-%d", i), 8
		}
		before := st.RoundTrips()
		out, err := svc.Request(ctx, qm.LeaseRequest{User: "u01@x.example", GPUs: 1 + i%2, Class: "train", Duration: time.Hour, RequestKey: key})
		if err != nil {
			t.Fatal(err)
		}
		granted := st.RoundTrips()
		if out.Lease.State != qm.Active {
			t.Fatalf("request %d: want an active lease, got %s", i, out.Lease.State)
		}
		if n := granted - before; n > want {
			t.Errorf("grant %d (key %q) took %d round trips to PostgreSQL, want %d", i, key, n, want)
		}
		if _, err := svc.Release(ctx, "u01@x.example", out.Lease.ID); err != nil {
			t.Fatal(err)
		}
		if n := st.RoundTrips() - granted; n > 7 {
			t.Errorf("release %d took %d round trips to PostgreSQL, want 7", i, n)
		}
	}
}
