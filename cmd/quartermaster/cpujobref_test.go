package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
)

// A console started again on the same database (at the same simulated moment, as --clock allows)
// gives a new CPU-only job a reference of its own, not the one a job of the run before still
// holds: two jobs of one name would be one job to the simulated cluster, and ending either would
// end both.
func TestCPUJobReferencesStayUniqueAcrossRestarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const at = "2026-12-02T08:00:00Z"
	for i := range 2 {
		msgs := runConsoleAt(t, dir, at, "alice@acme.example: /gpu submit data-prep input=raw/a output=out/a\n")
		if len(msgs) == 0 || !strings.Contains(msgs[0].Text, "CPU-only job") {
			t.Fatalf("run %d: %+v; want a CPU-only job started", i+1, msgs)
		}
	}
	db, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "quartermaster.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var leases []*qm.Lease
	if err := db.View(context.Background(), func(tx qm.Tx) error {
		leases, err = tx.ListLeases(context.Background(), qm.LeaseFilter{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	refs := map[string]qm.LeaseID{}
	for _, l := range leases {
		if !strings.HasPrefix(l.Ref, "sim:cpu:") {
			t.Errorf("%s: reference %q; want a simulated CPU job's", l.ID, l.Ref)
		}
		if other, ok := refs[l.Ref]; ok {
			t.Errorf("%s and %s, started in two runs on one database, are both job %s", other, l.ID, l.Ref)
		}
		refs[l.Ref] = l.ID
	}
	if len(leases) != 2 {
		t.Errorf("%d leases; want the two jobs", len(leases))
	}
}
