package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestKindsAndSlim: the zero Kind selects workspace leases only, AnyKind every kind, Parent the
// extensions of a lease; Slim reads the admission fields and leaves the rest empty.
func TestKindsAndSlim(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		ws := lease(1)
		ws.Node, ws.GPUIndex, ws.Reason = "h100-01", []int{2, 3}, "granted"
		ws.StartedAt = time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
		quota := &qm.Lease{Kind: qm.KindQuota, User: "U2", Team: "vision", Class: "h100", GPUs: 4, State: qm.PendingApproval, Because: "deadline", Duration: 24 * time.Hour}
		if err := db.Update(ctx, nil, func(tx qm.Tx) error {
			if err := tx.CreateLease(ctx, ws); err != nil {
				return err
			}
			if err := tx.CreateLease(ctx, quota); err != nil {
				return err
			}
			return tx.CreateLease(ctx, &qm.Lease{Kind: qm.KindExtension, Parent: ws.ID, User: "U1", Team: "vision", Class: "h100", State: qm.PendingApproval, Duration: time.Hour})
		}); err != nil {
			t.Fatal(err)
		}
		list := func(f qm.LeaseFilter) []*qm.Lease {
			var out []*qm.Lease
			if err := db.View(ctx, func(tx qm.Tx) error {
				var err error
				out, err = tx.ListLeases(ctx, f)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return out
		}
		if got := list(qm.LeaseFilter{}); len(got) != 1 || got[0].ID != ws.ID {
			t.Fatalf("zero kind: %+v", got)
		}
		if got := list(qm.LeaseFilter{Kind: qm.AnyKind}); len(got) != 3 {
			t.Fatalf("any kind: %d leases", len(got))
		}
		got := list(qm.LeaseFilter{Kind: qm.KindQuota})
		if len(got) != 1 || got[0].Because != "deadline" || got[0].Kind != qm.KindQuota {
			t.Fatalf("quota kind: %+v", got)
		}
		if got := list(qm.LeaseFilter{Kind: qm.KindExtension, Parent: ws.ID}); len(got) != 1 || got[0].Parent != ws.ID {
			t.Fatalf("extensions of %s: %+v", ws.ID, got)
		}
		slim := list(qm.LeaseFilter{Slim: true})
		if len(slim) != 1 {
			t.Fatalf("slim: %d", len(slim))
		}
		s := slim[0]
		if s.ID != ws.ID || s.Node != "h100-01" || len(s.GPUIndex) != 2 || s.GPUs != 1 || s.State != qm.Active || !s.StartedAt.Equal(ws.StartedAt) || s.Duration != time.Hour || s.Team != "vision" {
			t.Fatalf("slim lease lacks admission fields: %+v", s)
		}
		if s.Reason != "" {
			t.Fatalf("slim lease read more than asked: reason %q", s.Reason)
		}
	})
}

// TestHeld: placement sees exactly the GPUs that running workspace leases of the asked classes hold.
func TestHeld(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		mk := func(class string, st qm.State, kind qm.Kind, node string, gpus ...int) *qm.Lease {
			return &qm.Lease{Kind: kind, User: "u", Team: "vision", Class: class, GPUs: len(gpus), State: st, Node: node, GPUIndex: gpus, Duration: time.Hour}
		}
		ls := []*qm.Lease{
			mk("train", qm.Active, "", "h100-01", 0, 1),
			mk("train", qm.IdleWarned, "", "h100-02", 5),
			mk("train", qm.Provisioning, "", "h100-01", 2),
			mk("train", qm.Released, "", "h100-01", 3),
			mk("train", qm.Queued, "", ""),
			mk("interactive", qm.Active, "", "l40s-01", 0),
			mk("train", qm.Active, qm.KindQuota, ""),
		}
		if err := db.Update(ctx, nil, func(tx qm.Tx) error {
			for _, l := range ls {
				if err := tx.CreateLease(ctx, l); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var held []qm.Holding
		if err := db.View(ctx, func(tx qm.Tx) error {
			var err error
			held, err = tx.Held(ctx, []string{"train"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, h := range held {
			if h.Class != "train" || h.GPUs != len(h.GPUIndex) {
				t.Fatalf("holding %+v", h)
			}
			for _, g := range h.GPUIndex {
				got[fmt.Sprintf("%s/%d", h.Node, g)]++
			}
		}
		want := map[string]int{"h100-01/0": 1, "h100-01/1": 1, "h100-02/5": 1, "h100-01/2": 1}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("held %v, want %v", got, want)
		}
	})
}

// TestAddEvents: several events in one statement keep their order and get their ids.
func TestAddEvents(t *testing.T) {
	eachBackend(t, func(t *testing.T, url string) {
		db := storetest.Open(t, url)
		ctx := t.Context()
		l := lease(1)
		at := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
		es := []*qm.Event{{At: at, Actor: "u", To: qm.Queued, Reason: "a"}, {At: at, Actor: "system", From: qm.Queued, To: qm.Provisioning, Reason: "b"}, {At: at, Actor: "system", From: qm.Provisioning, To: qm.Active, Reason: "c"}}
		if err := db.Update(ctx, nil, func(tx qm.Tx) error {
			if err := tx.CreateLease(ctx, l); err != nil {
				return err
			}
			for _, e := range es {
				e.Lease = l.ID
			}
			return tx.AddEvents(ctx, es)
		}); err != nil {
			t.Fatal(err)
		}
		var got []*qm.Event
		if err := db.View(ctx, func(tx qm.Tx) error {
			var err error
			got, err = tx.Events(ctx, l.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].Reason != "a" || got[2].To != qm.Active || got[2].ID != es[2].ID || es[0].ID == 0 {
			t.Fatalf("events %+v (ids %d %d %d)", got, es[0].ID, es[1].ID, es[2].ID)
		}
		err := db.Update(ctx, nil, func(tx qm.Tx) error {
			return tx.AddEvents(ctx, []*qm.Event{{Lease: 999, At: at, Actor: "u", To: qm.Queued}})
		})
		if err != qm.ErrNotFound {
			t.Fatalf("events for a missing lease: %v", err)
		}
	})
}
