package store_test

import (
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestInMemoryDatabasesAreEachTheirOwn: every sqlite::memory: database a process opens is new and
// fully migrated, whatever the ones opened before it hold or did to their schema.
func TestInMemoryDatabasesAreEachTheirOwn(t *testing.T) {
	ctx := t.Context()
	leases := func(db *store.DB) []*qm.Lease {
		t.Helper()
		var ls []*qm.Lease
		if err := db.View(ctx, func(tx qm.Tx) error {
			var err error
			ls, err = tx.ListLeases(ctx, qm.LeaseFilter{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return ls
	}
	allApplied := func(db *store.DB) {
		t.Helper()
		st, err := db.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(st) < 2 {
			t.Fatalf("status %+v", st)
		}
		for _, m := range st {
			if !m.Applied || m.AppliedAt.IsZero() {
				t.Errorf("%s not applied on a new in-memory database", m.Name)
			}
		}
	}

	first := storetest.Open(t, storetest.MemorySQLite(t))
	if err := first.Update(ctx, nil, func(tx qm.Tx) error { return tx.CreateLease(ctx, lease(1)) }); err != nil {
		t.Fatal(err)
	}
	second := storetest.Open(t, storetest.MemorySQLite(t))
	allApplied(second)
	if ls := leases(second); len(ls) != 0 {
		t.Errorf("a new in-memory database holds %d leases of another one", len(ls))
	}
	if err := second.Update(ctx, nil, func(tx qm.Tx) error { return tx.CreateLease(ctx, lease(2)) }); err != nil {
		t.Fatal(err)
	}
	if ls := leases(first); len(ls) != 1 || ls[0].User != "U1" {
		t.Errorf("the first in-memory database holds %+v after a write to the second", ls)
	}

	// Rolling one database's schema back changes no other, and none opened later.
	if err := second.MigrateDown(ctx); err != nil {
		t.Fatal(err)
	}
	allApplied(first)
	third := storetest.Open(t, storetest.MemorySQLite(t))
	allApplied(third)
	if ls := leases(third); len(ls) != 0 {
		t.Errorf("a new in-memory database holds %d leases of another one", len(ls))
	}
}
