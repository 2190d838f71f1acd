package store_test

import (
	"slices"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// The references of the simulated cluster's CPU-only jobs are read back from both databases,
// those of ended leases too, and no other lease's, so that a cluster started again on the
// database numbers its jobs after them.
func TestSimCPUJobRefs(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		refs := map[string]qm.State{"sim:cpu:1796198400-7": qm.Active, "sim:cpu:1796198400-12": qm.Released, "sim:h100-01:0,1": qm.Active, "": qm.Queued}
		if err := db.Update(ctx, nil, func(tx qm.Tx) error {
			i := 0
			for ref, state := range refs {
				i++
				l := lease(i)
				l.Ref, l.State = ref, state
				if err := tx.CreateLease(ctx, l); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		got, err := db.SimCPUJobRefs(ctx)
		slices.Sort(got)
		if want := []string{"sim:cpu:1796198400-12", "sim:cpu:1796198400-7"}; err != nil || !slices.Equal(got, want) {
			t.Errorf("SimCPUJobRefs = %q, %v; want %q", got, err, want)
		}
	})
}
