package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// precision is the resolution every store keeps times at.
const precision = time.Microsecond

// Conformance checks that a qm.Store keeps the port's promises. open returns a new, empty, migrated
// store for each subtest; Conformance closes it when the subtest ends. The subtests run in parallel.
//
// A store whose writers run one at a time whatever their locks (SQLite) says so with a method
// SerialWriters() bool; for such a store the check that Updates under different keys overlap is
// reduced to both finishing.
func Conformance(t *testing.T, open func(t *testing.T) qm.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s qm.Store)
	}{
		{"CreateGet", testCreateGet},
		{"UpdateLease", testUpdateLease},
		{"RequestKey", testRequestKey},
		{"ListFilters", testListFilters},
		{"ListLimit", testListLimit},
		{"EndedAfterTextOrder", testEndedAfterOrder},
		{"TimeRoundTrip", testTimeRoundTrip},
		{"ZeroTimes", testZeroTimes},
		{"GPUIndex", testGPUIndex},
		{"Connection", testConnection},
		{"Events", testEvents},
		{"RollbackOnError", testRollbackOnError},
		{"RollbackOnPanic", testRollbackOnPanic},
		{"ViewIsReadOnly", testViewIsReadOnly},
		{"LocksSerialize", testLocksSerialize},
		{"DifferentKeysProceed", testDifferentKeysProceed},
		{"LockOrder", testLockOrder},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

// base is a fixed instant with nanoseconds, outside UTC, so round trips show truncation and zone.
var base = time.Date(2026, 3, 14, 9, 26, 53, 589793238, time.FixedZone("CET", 3600))

// sampleLease fills every field.
func sampleLease(n int) *qm.Lease {
	return &qm.Lease{
		User:       fmt.Sprintf("U%03d", n),
		Team:       "vision",
		Class:      "h100",
		GPUs:       2,
		Duration:   4*time.Hour + 30*time.Minute + 1500*time.Millisecond,
		Template:   "pytorch",
		DataClass:  "internal",
		Exclusive:  true,
		State:      qm.Active,
		Node:       "gpu-07",
		GPUIndex:   []int{0, 1},
		Rules:      "big-ask,night",
		Reason:     "granted by policy",
		Connect:    "ssh gpu-07 -p 2201",
		Ref:        "slurm-1234",
		RequestKey: fmt.Sprintf("req-%d", n),
		CreatedAt:  base,
		StartedAt:  base.Add(time.Minute),
		ExpiresAt:  base.Add(4*time.Hour + 31*time.Minute),
		KeptAt:     base.Add(2 * time.Hour),
		WarnedAt:   base.Add(90 * time.Minute),
		DecidedBy:  "U999",
		DecidedAt:  base.Add(30 * time.Second),
		Reclaimed:  1.25,
		Extensions: 1,
		Extended:   30 * time.Minute,
		Connection: qm.ConnectionIsland,

		ExpiryWarnedFor: base.Add(4*time.Hour + 31*time.Minute),
		Pauses: []qm.Pause{{Kind: qm.PauseRequeued, From: base.Add(10 * time.Minute), To: base.Add(25*time.Minute + time.Nanosecond)},
			{Kind: qm.PauseSuspended, From: base.Add(3 * time.Hour)}},
	}
}

// stored is l as a store gives it back: times in UTC at the store's precision, no GPUs as nil.
func stored(l *qm.Lease) qm.Lease {
	c := *l
	c.Pauses = append([]qm.Pause(nil), l.Pauses...) // its times change below, not l's
	for _, p := range timesOf(&c) {
		if !p.IsZero() {
			*p = p.UTC().Truncate(precision)
		}
	}
	if len(c.GPUIndex) == 0 {
		c.GPUIndex = nil
	}
	return c
}

func timesOf(l *qm.Lease) []*time.Time {
	ts := []*time.Time{&l.CreatedAt, &l.StartedAt, &l.ExpiresAt, &l.EndedAt, &l.KeptAt, &l.WarnedAt, &l.DecidedAt, &l.ExpiryWarnedFor}
	for i := range l.Pauses {
		ts = append(ts, &l.Pauses[i].From, &l.Pauses[i].To)
	}
	return ts
}

// checkLease fails the test unless got is want as the store keeps it, with every time in UTC.
func checkLease(t *testing.T, got, want *qm.Lease) {
	t.Helper()
	if got == nil {
		t.Fatalf("got no lease, want %+v", *want)
	}
	for i, p := range timesOf(got) {
		if !p.IsZero() && p.Location() != time.UTC {
			t.Errorf("time %d of %s is in %v, want UTC", i, got.ID, p.Location())
		}
	}
	g, w := stored(got), stored(want)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("lease %s:\n got %+v\nwant %+v", got.ID, g, w)
	}
}

func update(t *testing.T, s qm.Store, locks []string, fn func(qm.Tx) error) {
	t.Helper()
	if err := s.Update(t.Context(), locks, fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func create(t *testing.T, s qm.Store, ls ...*qm.Lease) {
	t.Helper()
	update(t, s, nil, func(tx qm.Tx) error {
		for _, l := range ls {
			if err := tx.CreateLease(t.Context(), l); err != nil {
				return err
			}
		}
		return nil
	})
}

func get(t *testing.T, s qm.Store, id qm.LeaseID) *qm.Lease {
	t.Helper()
	var l *qm.Lease
	err := s.View(t.Context(), func(tx qm.Tx) error {
		var err error
		l, err = tx.GetLease(t.Context(), id)
		return err
	})
	if err != nil {
		t.Fatalf("GetLease(%s): %v", id, err)
	}
	return l
}

func list(t *testing.T, s qm.Store, f qm.LeaseFilter) []*qm.Lease {
	t.Helper()
	var ls []*qm.Lease
	err := s.View(t.Context(), func(tx qm.Tx) error {
		var err error
		ls, err = tx.ListLeases(t.Context(), f)
		return err
	})
	if err != nil {
		t.Fatalf("ListLeases(%+v): %v", f, err)
	}
	return ls
}

func ids(ls []*qm.Lease) []qm.LeaseID {
	out := []qm.LeaseID{}
	for _, l := range ls {
		out = append(out, l.ID)
	}
	return out
}

func testCreateGet(t *testing.T, s qm.Store) {
	a, b := sampleLease(1), sampleLease(2)
	create(t, s, a, b)
	if a.ID <= 0 || b.ID <= a.ID {
		t.Fatalf("ids %d, %d: want positive and increasing", a.ID, b.ID)
	}
	checkLease(t, get(t, s, a.ID), a)
	checkLease(t, get(t, s, b.ID), b)

	// A lease made inside a transaction is visible to the rest of it.
	update(t, s, nil, func(tx qm.Tx) error {
		c := sampleLease(3)
		if err := tx.CreateLease(t.Context(), c); err != nil {
			return err
		}
		got, err := tx.GetLease(t.Context(), c.ID)
		if err != nil {
			return err
		}
		checkLease(t, got, c)
		return nil
	})

	err := s.View(t.Context(), func(tx qm.Tx) error {
		_, err := tx.GetLease(t.Context(), 987654)
		return err
	})
	if !errors.Is(err, qm.ErrNotFound) {
		t.Errorf("GetLease(unknown) = %v, want ErrNotFound", err)
	}
}

func testUpdateLease(t *testing.T, s qm.Store) {
	l := sampleLease(1)
	l.State = qm.Provisioning
	create(t, s, l)

	changed := *l
	changed.State = qm.Active
	changed.Node = "gpu-09"
	changed.GPUIndex = []int{4, 5, 6}
	changed.Exclusive = false
	changed.EndedAt = base.Add(5 * time.Hour)
	changed.StartedAt = time.Time{}
	changed.Reason = "running"
	changed.Extensions = 3
	changed.Reclaimed = 0.5
	changed.Duration = 9 * time.Hour
	changed.Extended = 5 * time.Hour
	changed.Connection = qm.ConnectionSpread
	update(t, s, nil, func(tx qm.Tx) error { return tx.UpdateLease(t.Context(), &changed, qm.Provisioning) })
	checkLease(t, get(t, s, l.ID), &changed)

	// The stored state is Active now: an update expecting Provisioning is stale.
	stale := changed
	stale.State = qm.Released
	err := s.Update(t.Context(), nil, func(tx qm.Tx) error { return tx.UpdateLease(t.Context(), &stale, qm.Provisioning) })
	if err != qm.ErrStale {
		t.Errorf("stale UpdateLease = %v, want qm.ErrStale itself", err)
	}
	checkLease(t, get(t, s, l.ID), &changed)

	ghost := changed
	ghost.ID = 987654
	err = s.Update(t.Context(), nil, func(tx qm.Tx) error { return tx.UpdateLease(t.Context(), &ghost, qm.Active) })
	if err != qm.ErrNotFound {
		t.Errorf("UpdateLease(unknown id) = %v, want qm.ErrNotFound itself", err)
	}
}

func testRequestKey(t *testing.T, s qm.Store) {
	first := sampleLease(1)
	first.RequestKey = "slack:T1:abc"
	create(t, s, first)

	// Leases without a key never collide.
	n1, n2 := sampleLease(2), sampleLease(3)
	n1.RequestKey, n2.RequestKey = "", ""
	create(t, s, n1, n2)

	err := s.Update(t.Context(), nil, func(tx qm.Tx) error {
		dup := sampleLease(4)
		dup.RequestKey = first.RequestKey
		err := tx.CreateLease(t.Context(), dup)
		if qm.ErrorCode(err) != qm.ECONFLICT {
			t.Errorf("CreateLease(repeated key) = %v (code %s), want ECONFLICT", err, qm.ErrorCode(err))
		}
		if dup.ID != 0 {
			t.Errorf("refused lease got id %s", dup.ID)
		}
		// The transaction goes on: the retried request finds the lease it made.
		got, err := tx.LeaseByRequestKey(t.Context(), first.RequestKey)
		if err != nil {
			return fmt.Errorf("LeaseByRequestKey after a conflict: %w", err)
		}
		if got.ID != first.ID {
			t.Errorf("LeaseByRequestKey = %s, want %s", got.ID, first.ID)
		}
		other := sampleLease(5)
		return tx.CreateLease(t.Context(), other)
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if got := list(t, s, qm.LeaseFilter{}); len(got) != 4 {
		t.Errorf("%d leases, want 4", len(got))
	}

	err = s.View(t.Context(), func(tx qm.Tx) error {
		got, err := tx.LeaseByRequestKey(t.Context(), first.RequestKey)
		if err != nil {
			return err
		}
		checkLease(t, got, first)
		if _, err := tx.LeaseByRequestKey(t.Context(), "never-used"); !errors.Is(err, qm.ErrNotFound) {
			t.Errorf("LeaseByRequestKey(unknown) = %v, want ErrNotFound", err)
		}
		if _, err := tx.LeaseByRequestKey(t.Context(), ""); !errors.Is(err, qm.ErrNotFound) {
			t.Errorf(`LeaseByRequestKey("") = %v, want ErrNotFound`, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// Changing a lease's key to one in use is refused too.
	err = s.Update(t.Context(), nil, func(tx qm.Tx) error {
		c := *n1
		c.RequestKey = first.RequestKey
		return tx.UpdateLease(t.Context(), &c, c.State)
	})
	if qm.ErrorCode(err) != qm.ECONFLICT {
		t.Errorf("UpdateLease(key in use) = %v, want ECONFLICT", err)
	}
}

func testListFilters(t *testing.T, s qm.Store) {
	type row struct {
		user, team, class string
		state             qm.State
		ended             time.Duration // after base; 0 = not ended
	}
	rows := []row{
		{"alice", "vision", "h100", qm.Active, 0},
		{"alice", "vision", "l40s", qm.Released, 1 * time.Hour},
		{"bob", "vision", "h100", qm.Queued, 0},
		{"bob", "nlp", "h100", qm.Expired, 3 * time.Hour},
		{"carol", "nlp", "l40s", qm.PendingApproval, 0},
		{"carol", "nlp", "h100", qm.IdleWarned, 0},
		{"dave", "speech", "h100", qm.Denied, 2 * time.Hour},
	}
	all := make([]*qm.Lease, len(rows))
	for i, r := range rows {
		l := sampleLease(i)
		l.User, l.Team, l.Class, l.State, l.RequestKey = r.user, r.team, r.class, r.state, ""
		if r.ended > 0 {
			l.EndedAt = base.Add(r.ended)
		}
		all[i] = l
	}
	create(t, s, all...)
	id := func(is ...int) []qm.LeaseID {
		out := []qm.LeaseID{}
		for _, i := range is {
			out = append(out, all[i].ID)
		}
		return out
	}
	cases := []struct {
		name string
		f    qm.LeaseFilter
		want []qm.LeaseID
	}{
		{"all", qm.LeaseFilter{}, id(0, 1, 2, 3, 4, 5, 6)},
		{"user", qm.LeaseFilter{User: "alice"}, id(0, 1)},
		{"team", qm.LeaseFilter{Team: "nlp"}, id(3, 4, 5)},
		{"class", qm.LeaseFilter{Class: "l40s"}, id(1, 4)},
		{"states", qm.LeaseFilter{States: qm.LiveStates}, id(0, 2, 5)},
		{"open states", qm.LeaseFilter{States: qm.OpenStates}, id(0, 2, 4, 5)},
		{"one state", qm.LeaseFilter{States: []qm.State{qm.Expired}}, id(3)},
		{"empty states match all", qm.LeaseFilter{States: []qm.State{}}, id(0, 1, 2, 3, 4, 5, 6)},
		{"no match", qm.LeaseFilter{User: "nobody"}, id()},
		{"team and class", qm.LeaseFilter{Team: "vision", Class: "h100"}, id(0, 2)},
		{"user team class states", qm.LeaseFilter{User: "carol", Team: "nlp", Class: "h100", States: qm.LiveStates}, id(5)},
		{"ended after", qm.LeaseFilter{EndedAfter: base.Add(2 * time.Hour)}, id(0, 2, 3, 4, 5, 6)},
		{"ended after is inclusive", qm.LeaseFilter{EndedAfter: base.Add(3 * time.Hour)}, id(0, 2, 3, 4, 5)},
		{"ended after in another zone", qm.LeaseFilter{EndedAfter: base.Add(3 * time.Hour).In(time.FixedZone("PST", -8*3600))}, id(0, 2, 3, 4, 5)},
		{"ended after and team", qm.LeaseFilter{Team: "vision", EndedAfter: base.Add(90 * time.Minute)}, id(0, 2)},
		{"limit", qm.LeaseFilter{Limit: 3}, id(0, 1, 2)},
		{"limit after filter", qm.LeaseFilter{Class: "h100", Limit: 2}, id(0, 2)},
		{"limit beyond", qm.LeaseFilter{User: "bob", Limit: 10}, id(2, 3)},
	}
	for _, c := range cases {
		if got := ids(list(t, s, c.f)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: ListLeases(%+v) = %v, want %v", c.name, c.f, got, c.want)
		}
	}
	for _, l := range list(t, s, qm.LeaseFilter{User: "bob"}) {
		want := all[2]
		if l.ID == all[3].ID {
			want = all[3]
		}
		checkLease(t, l, want)
	}
}

func testListLimit(t *testing.T, s qm.Store) {
	var made []qm.LeaseID
	for i := range 12 {
		l := sampleLease(i)
		create(t, s, l)
		made = append(made, l.ID)
	}
	for _, n := range []int{1, 5, 12, 13} {
		got := ids(list(t, s, qm.LeaseFilter{Limit: n}))
		want := made[:min(n, len(made))]
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Limit %d: %v, want %v", n, got, want)
		}
	}
}

// testEndedAfterOrder compares instants within one second, with and without fractions, where a
// store keeping times as text would order them wrongly if its layout did not sort.
func testEndedAfterOrder(t *testing.T, s qm.Store) {
	sec := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ends := []time.Duration{0, 100 * time.Microsecond, 123 * time.Millisecond, 500 * time.Millisecond, 999999 * time.Microsecond, time.Second}
	ls := make([]*qm.Lease, len(ends))
	for i, d := range ends {
		ls[i] = sampleLease(i)
		ls[i].EndedAt = sec.Add(d)
	}
	create(t, s, ls...)
	for _, d := range ends {
		for _, probe := range []time.Duration{d - time.Microsecond, d, d + time.Microsecond} {
			after := sec.Add(probe)
			got := map[qm.LeaseID]bool{}
			for _, l := range list(t, s, qm.LeaseFilter{EndedAfter: after}) {
				got[l.ID] = true
			}
			for j, l := range ls {
				want := !l.EndedAt.Before(after)
				if got[l.ID] != want {
					t.Errorf("EndedAfter %v: lease %d ended %v kept=%v, want %v", after.Format(time.RFC3339Nano), j, l.EndedAt.Format(time.RFC3339Nano), got[l.ID], want)
				}
			}
		}
	}
}

func testTimeRoundTrip(t *testing.T, s qm.Store) {
	zones := []*time.Location{time.UTC, time.FixedZone("IST", 5*3600+1800), time.FixedZone("HST", -10*3600), time.Local}
	var ls []*qm.Lease
	for i, z := range zones {
		l := sampleLease(i)
		l.CreatedAt = base.In(z).Add(time.Duration(i) * 999 * time.Nanosecond)
		l.StartedAt = time.Date(1999, 12, 31, 23, 59, 59, 999999999, z)
		l.ExpiresAt = time.Date(2100, 1, 1, 0, 0, 0, 1000, z)
		l.EndedAt = time.Now().In(z) // carries a monotonic reading
		l.DecidedAt = time.Date(2026, 1, 1, 0, 0, 0, 999, z)
		ls = append(ls, l)
	}
	create(t, s, ls...)
	for _, l := range ls {
		got := get(t, s, l.ID)
		checkLease(t, got, l)
		if !got.DecidedAt.Equal(l.DecidedAt.Truncate(time.Second)) {
			t.Errorf("DecidedAt %v: want the nanoseconds truncated", got.DecidedAt)
		}
		if got.StartedAt.Nanosecond() != 999999000 {
			t.Errorf("StartedAt %v: want truncation, not rounding, to microseconds", got.StartedAt)
		}
	}
}

func testZeroTimes(t *testing.T, s qm.Store) {
	l := sampleLease(1)
	for _, p := range timesOf(l) {
		*p = time.Time{}
	}
	create(t, s, l)
	got := get(t, s, l.ID)
	for i, p := range timesOf(got) {
		if !p.IsZero() {
			t.Errorf("time %d = %v, want zero", i, *p)
		}
	}
	checkLease(t, got, l)

	// Setting a time and clearing it again.
	c := *got
	c.EndedAt = base
	update(t, s, nil, func(tx qm.Tx) error { return tx.UpdateLease(t.Context(), &c, c.State) })
	checkLease(t, get(t, s, l.ID), &c)
	c.EndedAt = time.Time{}
	update(t, s, nil, func(tx qm.Tx) error { return tx.UpdateLease(t.Context(), &c, c.State) })
	if got := get(t, s, l.ID); !got.EndedAt.IsZero() {
		t.Errorf("EndedAt = %v after clearing, want zero", got.EndedAt)
	}
	// A lease with no end is open at any instant.
	if got := ids(list(t, s, qm.LeaseFilter{EndedAfter: base.Add(1000 * time.Hour)})); !reflect.DeepEqual(got, []qm.LeaseID{l.ID}) {
		t.Errorf("EndedAfter with no end: %v, want [%s]", got, l.ID)
	}
}

func testGPUIndex(t *testing.T, s qm.Store) {
	for i, idx := range [][]int{nil, {}, {0}, {0, 1}, {7, 3, 5}, {0, 1, 2, 3, 4, 5, 6, 7}, {12, 15}} {
		l := sampleLease(i)
		l.GPUIndex = idx
		create(t, s, l)
		got := get(t, s, l.ID)
		if len(idx) == 0 {
			if len(got.GPUIndex) != 0 {
				t.Errorf("GPUIndex %v came back as %v", idx, got.GPUIndex)
			}
			continue
		}
		if !reflect.DeepEqual(got.GPUIndex, idx) {
			t.Errorf("GPUIndex %v came back as %v", idx, got.GPUIndex)
		}
	}
}

// testConnection: every connection a placement records comes back as it was written.
func testConnection(t *testing.T, s qm.Store) {
	for i, c := range []qm.Connection{qm.ConnectionUnknown, qm.ConnectionIsland, qm.ConnectionSpread, qm.ConnectionNodes} {
		l := sampleLease(i)
		l.Connection = c
		create(t, s, l)
		if got := get(t, s, l.ID); got.Connection != c {
			t.Errorf("connection %q came back as %q", c, got.Connection)
		}
		if got := list(t, s, qm.LeaseFilter{User: l.User}); len(got) != 1 || got[0].Connection != c {
			t.Errorf("connection %q listed as %+v", c, got)
		}
	}
}

func testEvents(t *testing.T, s qm.Store) {
	a, b := sampleLease(1), sampleLease(2)
	create(t, s, a, b)
	steps := []struct {
		lease    *qm.Lease
		from, to qm.State
		actor    string
	}{
		{a, "", qm.PendingApproval, "U001"},
		{b, "", qm.Queued, "U002"},
		{a, qm.PendingApproval, qm.Queued, "U999"},
		{a, qm.Queued, qm.Active, qm.SystemActor},
		{b, qm.Queued, qm.Cancelled, "U002"},
		{a, qm.Active, qm.Released, "U001"},
	}
	var written []*qm.Event
	for i, st := range steps {
		e := &qm.Event{Lease: st.lease.ID, At: base.Add(time.Duration(i) * time.Minute), Actor: st.actor, From: st.from, To: st.to, Reason: fmt.Sprintf("step %d", i)}
		if i == 3 {
			e.At = time.Time{}
		}
		written = append(written, e)
	}
	// The last two events go in one transaction: they keep their order too.
	for i := 0; i < len(written); {
		n := 1
		if i == len(written)-2 {
			n = 2
		}
		update(t, s, nil, func(tx qm.Tx) error {
			for _, e := range written[i : i+n] {
				if err := tx.AddEvent(t.Context(), e); err != nil {
					return err
				}
			}
			return nil
		})
		i += n
	}
	for i, e := range written {
		if e.ID <= 0 || (i > 0 && e.ID <= written[i-1].ID) {
			t.Fatalf("event %d got id %d: want positive and increasing", i, e.ID)
		}
	}
	check := func(l *qm.Lease) {
		var want []qm.Event
		for _, e := range written {
			if e.Lease == l.ID {
				w := *e
				if !w.At.IsZero() {
					w.At = w.At.UTC().Truncate(precision)
				}
				want = append(want, w)
			}
		}
		var got []*qm.Event
		err := s.View(t.Context(), func(tx qm.Tx) error {
			var err error
			got, err = tx.Events(t.Context(), l.ID)
			return err
		})
		if err != nil {
			t.Fatalf("Events(%s): %v", l.ID, err)
		}
		if len(got) != len(want) {
			t.Fatalf("Events(%s): %d events, want %d", l.ID, len(got), len(want))
		}
		for i := range got {
			if got[i].At.Location() != time.UTC && !got[i].At.IsZero() {
				t.Errorf("event At %v not in UTC", got[i].At)
			}
			if !reflect.DeepEqual(*got[i], want[i]) {
				t.Errorf("Events(%s)[%d] = %+v, want %+v", l.ID, i, *got[i], want[i])
			}
		}
	}
	check(a)
	check(b)

	err := s.Update(t.Context(), nil, func(tx qm.Tx) error {
		return tx.AddEvent(t.Context(), &qm.Event{Lease: 987654, At: base, Actor: "x", To: qm.Active})
	})
	if !errors.Is(err, qm.ErrNotFound) {
		t.Errorf("AddEvent(unknown lease) = %v, want ErrNotFound", err)
	}
	check(a)

	err = s.View(t.Context(), func(tx qm.Tx) error {
		es, err := tx.Events(t.Context(), 987654)
		if err == nil && len(es) != 0 {
			t.Errorf("Events(unknown) = %v, want none", es)
		}
		return err
	})
	if err != nil {
		t.Errorf("Events(unknown): %v", err)
	}
}

func testRollbackOnError(t *testing.T, s qm.Store) {
	kept := sampleLease(0)
	create(t, s, kept)

	boom := errors.New("boom")
	l := sampleLease(1)
	err := s.Update(t.Context(), []string{"k"}, func(tx qm.Tx) error {
		if err := tx.CreateLease(t.Context(), l); err != nil {
			return err
		}
		if err := tx.AddEvent(t.Context(), &qm.Event{Lease: kept.ID, At: base, Actor: "x", To: qm.Active}); err != nil {
			return err
		}
		c := *kept
		c.State = qm.Released
		if err := tx.UpdateLease(t.Context(), &c, kept.State); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("Update = %v, want fn's error itself", err)
	}

	// A domain error passes through untouched too.
	derr := qm.Errorf(qm.EFORBIDDEN, "team vision is over quota")
	if err := s.Update(t.Context(), nil, func(tx qm.Tx) error { return derr }); err != derr {
		t.Errorf("Update = %v, want the domain error itself", err)
	}
	if err := s.View(t.Context(), func(tx qm.Tx) error { return derr }); err != derr {
		t.Errorf("View = %v, want the domain error itself", err)
	}

	got := list(t, s, qm.LeaseFilter{})
	if len(got) != 1 {
		t.Fatalf("%d leases after rollback, want 1", len(got))
	}
	checkLease(t, got[0], kept)
	err = s.View(t.Context(), func(tx qm.Tx) error {
		if _, err := tx.LeaseByRequestKey(t.Context(), l.RequestKey); !errors.Is(err, qm.ErrNotFound) {
			t.Errorf("rolled back lease found by key: %v", err)
		}
		es, err := tx.Events(t.Context(), kept.ID)
		if len(es) != 0 {
			t.Errorf("rolled back event kept: %+v", es)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The rolled back key is free again.
	create(t, s, sampleLease(1))
}

func testRollbackOnPanic(t *testing.T, s qm.Store) {
	func() {
		defer func() {
			if p := recover(); p != "kaboom" {
				t.Errorf("recovered %v, want the panic to go on", p)
			}
		}()
		_ = s.Update(t.Context(), []string{"k"}, func(tx qm.Tx) error {
			if err := tx.CreateLease(t.Context(), sampleLease(1)); err != nil {
				return err
			}
			panic("kaboom")
		})
	}()
	// The store is still usable, and nothing was written.
	if got := list(t, s, qm.LeaseFilter{}); len(got) != 0 {
		t.Errorf("%d leases after a panic, want 0", len(got))
	}
	create(t, s, sampleLease(1))
	if got := list(t, s, qm.LeaseFilter{}); len(got) != 1 {
		t.Errorf("%d leases, want 1", len(got))
	}
}

func testViewIsReadOnly(t *testing.T, s qm.Store) {
	l := sampleLease(1)
	create(t, s, l)
	if err := s.View(t.Context(), func(tx qm.Tx) error { return tx.CreateLease(t.Context(), sampleLease(2)) }); err == nil {
		t.Error("CreateLease inside View succeeded")
	}
	if err := s.View(t.Context(), func(tx qm.Tx) error {
		c := *l
		c.State = qm.Released
		return tx.UpdateLease(t.Context(), &c, l.State)
	}); err == nil {
		t.Error("UpdateLease inside View succeeded")
	}
	if err := s.View(t.Context(), func(tx qm.Tx) error {
		return tx.AddEvent(t.Context(), &qm.Event{Lease: l.ID, At: base, To: qm.Released})
	}); err == nil {
		t.Error("AddEvent inside View succeeded")
	}
	checkLease(t, get(t, s, l.ID), l)
	if got := list(t, s, qm.LeaseFilter{}); len(got) != 1 {
		t.Errorf("%d leases, want 1", len(got))
	}
}

var errFull = errors.New("team is full")

// testLocksSerialize runs the quota check the lease service makes: count the team's live leases,
// and grant one more if below the limit. Under one lock key the limit holds however many race.
func testLocksSerialize(t *testing.T, s qm.Store) {
	const (
		workers = 24
		limit   = 5
	)
	var (
		wg             sync.WaitGroup
		mu             sync.Mutex
		granted, full  int
		unexpectedErrs []error
	)
	// Open connections first (a store with a pool keeps them), so the workers start together.
	for range workers / 2 {
		wg.Go(func() {
			_ = s.View(t.Context(), func(qm.Tx) error { time.Sleep(10 * time.Millisecond); return nil })
		})
	}
	wg.Wait()
	start := make(chan struct{})
	for i := range workers {
		wg.Go(func() {
			<-start
			// Duplicated keys and a key per worker: only the shared one serializes.
			locks := []string{"quota:vision", fmt.Sprintf("user:U%03d", i), "quota:vision"}
			err := s.Update(t.Context(), locks, func(tx qm.Tx) error {
				live, err := tx.ListLeases(t.Context(), qm.LeaseFilter{Team: "vision", States: qm.LiveStates})
				if err != nil {
					return err
				}
				if len(live) >= limit {
					return errFull
				}
				time.Sleep(5 * time.Millisecond) // widen the window between the check and the write
				return tx.CreateLease(t.Context(), sampleLease(i))
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				granted++
			case err == errFull:
				full++
			default:
				unexpectedErrs = append(unexpectedErrs, err)
			}
		})
	}
	close(start)
	wg.Wait()
	for _, err := range unexpectedErrs {
		t.Errorf("Update: %v", err)
	}
	live := list(t, s, qm.LeaseFilter{Team: "vision", States: qm.LiveStates})
	if len(live) != limit || granted != limit || full != workers-limit {
		t.Errorf("%d live leases, %d granted, %d refused; want %d, %d, %d", len(live), granted, full, limit, limit, workers-limit)
	}
}

// testDifferentKeysProceed holds one key while another Update under a different key runs to the
// end, and checks that an Update under the held key waits.
func testDifferentKeysProceed(t *testing.T, s qm.Store) {
	ctx := t.Context()
	if sw, ok := s.(interface{ SerialWriters() bool }); ok && sw.SerialWriters() {
		// Writers take turns: both must still finish, without a busy error.
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				errs[i] = s.Update(ctx, []string{fmt.Sprintf("k:%d", i)}, func(tx qm.Tx) error {
					return tx.CreateLease(ctx, sampleLease(i))
				})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("Update %d: %v", i, err)
			}
		}
		return
	}

	holding := make(chan struct{})
	release := make(chan struct{})
	aDone := make(chan error, 1)
	go func() {
		aDone <- s.Update(ctx, []string{"k:a"}, func(tx qm.Tx) error {
			if err := tx.CreateLease(ctx, sampleLease(1)); err != nil {
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	select {
	case <-holding:
	case err := <-aDone:
		t.Fatalf("Update a: %v", err)
	}

	sameDone := make(chan error, 1)
	go func() {
		sameDone <- s.Update(ctx, []string{"k:a"}, func(tx qm.Tx) error {
			return tx.CreateLease(ctx, sampleLease(3))
		})
	}()

	bDone := make(chan error, 1)
	go func() {
		bDone <- s.Update(ctx, []string{"k:b"}, func(tx qm.Tx) error {
			return tx.CreateLease(ctx, sampleLease(2))
		})
	}()
	select {
	case err := <-bDone:
		if err != nil {
			t.Errorf("Update b: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("Update under key b waited for the holder of key a")
	}
	sameFinished := false
	select {
	case err := <-sameDone:
		sameFinished = true
		t.Errorf("Update under key a finished (err %v) while another held a", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-aDone; err != nil {
		t.Errorf("Update a: %v", err)
	}
	if !sameFinished {
		if err := <-sameDone; err != nil {
			t.Errorf("second Update under a: %v", err)
		}
	}
	if got := list(t, s, qm.LeaseFilter{}); len(got) != 3 {
		t.Errorf("%d leases, want 3", len(got))
	}
}

// testLockOrder takes two keys in opposite orders from many goroutines: the store must order them
// itself, so nobody deadlocks or fails.
func testLockOrder(t *testing.T, s qm.Store) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		locks := []string{"team:x", "team:y"}
		if i%2 == 1 {
			locks = []string{"team:y", "team:x"}
		}
		wg.Go(func() {
			errs[i] = s.Update(ctx, locks, func(tx qm.Tx) error {
				time.Sleep(time.Millisecond)
				return tx.CreateLease(ctx, sampleLease(i))
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Update %d: %v", i, err)
		}
	}
	if got := list(t, s, qm.LeaseFilter{}); len(got) != len(errs) {
		t.Errorf("%d leases, want %d", len(got), len(errs))
	}
}
