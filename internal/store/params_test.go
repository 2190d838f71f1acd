package store_test

import (
	"maps"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestLeaseParams checks that a lease's template parameters survive create, update and list on
// both databases, and that a lease without them reads back as nil.
func TestLeaseParams(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		ctx := t.Context()
		db := storetest.Open(t, url)
		with := lease(1)
		with.Template = "pytorch-ddp"
		with.Params = map[string]string{"nnodes": "2", "script": "train it.py", "quote": `a"b`}
		without := lease(2)
		if err := db.Update(ctx, nil, func(tx qm.Tx) error {
			if err := tx.CreateLease(ctx, with); err != nil {
				return err
			}
			return tx.CreateLease(ctx, without)
		}); err != nil {
			t.Fatal(err)
		}
		var got []*qm.Lease
		if err := db.View(ctx, func(tx qm.Tx) error {
			var err error
			got, err = tx.ListLeases(ctx, qm.LeaseFilter{Kind: qm.AnyKind})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || !maps.Equal(got[0].Params, with.Params) || got[1].Params != nil {
			t.Fatalf("params read back as %v and %v", got[0].Params, got[1].Params)
		}
		got[0].Params["nnodes"] = "4"
		if err := db.Update(ctx, nil, func(tx qm.Tx) error { return tx.UpdateLease(ctx, got[0], got[0].State) }); err != nil {
			t.Fatal(err)
		}
		if err := db.View(ctx, func(tx qm.Tx) error {
			l, err := tx.GetLease(ctx, with.ID)
			if err == nil && l.Params["nnodes"] != "4" {
				t.Errorf("after update: %v", l.Params)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	})
}
