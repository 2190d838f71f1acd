package qm_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// tidePolicy has names of its own, Tokyo time and a class that warns 25 minutes before a lease ends.
const tidePolicy = `organization: Tide Works
timezone: Asia/Tokyo
classes:
  - {name: surf, sku: A10, max_gpus: 2, max_duration: 10h, expiry_warning: 25m}
  - {name: deep, sku: H100, max_gpus: 8, max_duration: 72h, expiry_warning: 0}
default_quota: {gpus: {surf: 2, deep: 0}}
teams:
  - {name: kelp, idp_groups: [g-kelp], budget_owners: [kai@tide.example]}
directory:
  - {user: nami@tide.example, groups: [g-kelp]}
  - {user: kai@tide.example, groups: [g-kelp]}
sim:
  nodes:
    - {name: surf, count: 1, class: surf, gpus: 4}
    - {name: deep, count: 1, class: deep, gpus: 8}
`

func warnings(cs ...*courier) []qm.Notice {
	var out []qm.Notice
	for _, c := range cs {
		for _, n := range c.delivered() {
			if n.Kind == qm.NoticeExpiringSoon {
				out = append(out, n)
			}
		}
	}
	return out
}

// Three replicas ticking together at a lease's warning time warn its owner once; a replica
// started afterwards (a restart) does not warn again; an extension's new end is warned of once
// more, at its own time; the lifecycle loop wakes for each warning.
func TestExpiryWarningOncePerEndAcrossReplicas(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		ctx := context.Background()
		p, err := policy.Load([]byte(tidePolicy), "tide.yaml")
		if err != nil {
			t.Fatal(err)
		}
		st := storetest.Open(t, url)
		start := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
		clock := sim.NewClock(start)
		cs := []*courier{{}, {}, {}}
		var replicas []*qm.Service
		for i, name := range []string{"a", "b", "c"} {
			replicas = append(replicas, outboxService(t, p, st, clock, name, cs[i]))
		}
		out, err := replicas[0].Request(ctx, qm.LeaseRequest{User: "nami@tide.example", GPUs: 1, Class: "surf", Duration: 3 * time.Hour})
		if err != nil || out.Lease.State != qm.Active {
			t.Fatalf("request: %v %+v", err, out)
		}
		id := out.Lease.ID
		due := start.Add(3*time.Hour - 25*time.Minute)
		if next, err := replicas[1].NextDue(ctx); err != nil || !next.Equal(due) {
			t.Fatalf("NextDue = %v, %v; want the warning's time %v", next, err, due)
		}
		tickAll := func() {
			var wg sync.WaitGroup
			for _, r := range replicas {
				wg.Go(func() {
					if err := r.Tick(ctx); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			for _, r := range replicas {
				if err := r.WaitNotices(ctx); err != nil {
					t.Error(err)
				}
				if _, err := r.DeliverNotices(ctx); err != nil {
					t.Error(err)
				}
			}
		}
		clock.Set(due.Add(-time.Second))
		tickAll()
		if w := warnings(cs...); len(w) != 0 {
			t.Fatalf("a second before the warning's time: %d warnings", len(w))
		}
		clock.Set(due)
		tickAll()
		w := warnings(cs...)
		if len(w) != 1 || w[0].Lease.ID != id || w[0].To[0] != "nami@tide.example" || !w[0].Lease.ExpiresAt.Equal(start.Add(3*time.Hour)) {
			t.Fatalf("at the warning's time: %+v", w)
		}
		l, err := replicas[0].Get(ctx, id)
		if err != nil || !l.ExpiryWarnedFor.Equal(l.ExpiresAt) {
			t.Fatalf("the warned end is not kept: %v %+v", err, l)
		}
		// A restart: a new process on the same database.
		restarted := &courier{}
		replicas = append(replicas, outboxService(t, p, st, clock, "d", restarted))
		cs = append(cs, restarted)
		clock.Set(due.Add(time.Minute))
		tickAll()
		if w := warnings(cs...); len(w) != 1 {
			t.Fatalf("after a restart: %d warnings, want still 1", len(w))
		}
		if next, _ := replicas[3].NextDue(ctx); !next.Equal(start.Add(3 * time.Hour)) {
			t.Errorf("after the warning NextDue = %v, want the end", next)
		}
		// Extended by 1h: the new end is warned of at its own time.
		if out, err := replicas[2].Extend(ctx, "nami@tide.example", id, time.Hour); err != nil || out.Lease.Kind != qm.KindWorkspace {
			t.Fatalf("extend: %v %+v", err, out)
		}
		due2 := due.Add(time.Hour)
		if next, _ := replicas[0].NextDue(ctx); !next.Equal(due2) {
			t.Errorf("after the extension NextDue = %v, want %v", next, due2)
		}
		clock.Set(due2.Add(-time.Second))
		tickAll()
		if w := warnings(cs...); len(w) != 1 {
			t.Fatalf("before the new end's warning time: %d warnings", len(w))
		}
		clock.Set(due2)
		tickAll()
		// Each replica's courier keeps its own: the two warnings, one per end, in any order.
		w = warnings(cs...)
		ends := map[time.Time]int{}
		for _, n := range w {
			ends[n.Lease.ExpiresAt.UTC()]++
		}
		if len(w) != 2 || ends[start.Add(3*time.Hour).UTC()] != 1 || ends[start.Add(4*time.Hour).UTC()] != 1 {
			t.Fatalf("at the new end's warning time: %d warnings, for the ends %v", len(w), ends)
		}
	})
}

// A class with expiry_warning: 0 warns of no end, and its leases give the loop no warning time.
func TestExpiryWarningZeroIsOff(t *testing.T) {
	ctx := context.Background()
	p, err := policy.Load([]byte(tidePolicy), "tide.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Teams[0].Quota = &policy.Quota{GPUs: map[string]int{"surf": 2, "deep": 8}}
	st := storetest.Open(t, storetest.SQLite(t))
	start := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	clock := sim.NewClock(start)
	c := &courier{}
	s := outboxService(t, p, st, clock, "a", c)
	out, err := s.Request(ctx, qm.LeaseRequest{User: "nami@tide.example", GPUs: 8, Class: "deep", Duration: 3 * time.Hour})
	if err != nil || out.Lease.State != qm.Active {
		t.Fatalf("request: %v %+v", err, out)
	}
	if next, _ := s.NextDue(ctx); !next.Equal(start.Add(3 * time.Hour)) {
		t.Errorf("NextDue = %v, want the end", next)
	}
	clock.Set(start.Add(3*time.Hour - time.Minute))
	if err := s.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if w := warnings(c); len(w) != 0 {
		t.Errorf("expiry_warning: 0 warned: %+v", w)
	}
}
