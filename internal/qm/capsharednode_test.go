package qm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/waits"
)

// ternPolicy has two shared classes of its own names, in kronor: dinghy, capped at a quarter of
// the cluster's GPUs, and trawler, with no cap.
const ternPolicy = `organization: Tern Yard
currency: SEK
timezone: America/Halifax
classes:
  - {name: dinghy, sku: A40, price_per_gpu_hour: 12, isolation: shared, max_gpus: 4, max_duration: 8h, capacity_share: 0.25}
  - {name: trawler, sku: A40, price_per_gpu_hour: 12, isolation: shared, max_gpus: 8, max_duration: 24h}
teams:
  - {name: kelp, idp_groups: [g-kelp], budget_owners: [ines@tern.example], quota: {gpus: {dinghy: 8, trawler: 8}, gpu_hours_per_week: 0}}
  - {name: gull, idp_groups: [g-gull], budget_owners: [bo@tern.example], quota: {gpus: {dinghy: 8, trawler: 8}, gpu_hours_per_week: 0}}
backend: sim
directory:
  - {user: ines@tern.example, groups: [g-kelp]}
  - {user: bo@tern.example, groups: [g-gull]}
`

// ternService is a service on ternPolicy whose scheduler reports yard1, 4 GPUs in both classes'
// partitions (each class's GRES as given), yard2 of dinghy alone, and net1 and net2 of trawler
// alone, 4 GPUs each; its inventory is read.
func ternService(t *testing.T, dinghyGRES, trawlerGRES string) (*qm.Service, *fakeScheduler) {
	t.Helper()
	svc, f, _, _ := schedService(t, qm.Started{State: qm.Active})
	p, err := policy.Load([]byte(ternPolicy), "tern.yaml")
	if err != nil {
		t.Fatal(err)
	}
	svc.Policy, svc.Directory = p, p
	f.nodes = []qm.Node{
		{Name: "yard1", Class: "dinghy", GPUs: 4, GRES: dinghyGRES},
		{Name: "yard1", Class: "trawler", GPUs: 4, GRES: trawlerGRES},
		{Name: "yard2", Class: "dinghy", GPUs: 4, GRES: dinghyGRES},
		{Name: "net1", Class: "trawler", GPUs: 4, GRES: trawlerGRES},
		{Name: "net2", Class: "trawler", GPUs: 4, GRES: trawlerGRES},
	}
	if _, err := svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc, f
}

// A lease of a class without a capacity share, on a node whose GPUs a capped class counts too
// (one GRES for both), holds GPUs of the capped class's nodes that the scheduler, which leaves the
// service's own jobs out, does not report used there: they count against the cap, as a job
// outside the service on them would. A request of the capped class past the cap waits, saying
// what holds it; the catalog shows no more free than a request gets; and the wait is until the
// other lease's end.
func TestCapCountsAnUncappedLeaseOnANodeItShares(t *testing.T) {
	for _, gres := range [][2]string{{"gpu:a40", "gpu:a40"}, {"gpu:a40", "gpu"}} {
		for _, model := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s+%s/predictor=%v", gres[0], gres[1], model), func(t *testing.T) {
				ctx := context.Background()
				svc, _ := ternService(t, gres[0], gres[1])
				if model {
					svc.Waits = waits.New()
				}
				tr := mustRequest(t, svc, "bo@tern.example", 3, "trawler")
				if tr.State != qm.Active || tr.Node != "yard1" {
					t.Fatalf("the trawler lease is %s on %q; the test needs 3 GPUs of yard1 running", tr.State, tr.Node)
				}
				free := catalogOf(t, svc, "ines@tern.example", "dinghy").Free
				l := mustRequest(t, svc, "ines@tern.example", 3, "dinghy")
				if l.State != qm.Queued {
					t.Fatalf("trawler lease %s holds 3 of yard1's GPUs, which dinghy counts too, so dinghy's quarter of the cluster is nearly full; yet a dinghy request for 3 is %s on %q", tr.ID, l.State, l.Node)
				}
				if !strings.Contains(l.Reason, "capacity share") || !strings.Contains(l.Reason, "trawler") || !strings.Contains(l.Reason, "hold 3") {
					t.Errorf("the queued dinghy lease says %q; want the capacity share, and that trawler's leases on its nodes hold 3", l.Reason)
				}
				if free >= 3 {
					t.Errorf("the catalog showed %d dinghy GPUs free, yet a request for 3 waits", free)
				}
				w, err := svc.LeaseWait(ctx, l)
				if err != nil {
					t.Fatal(err)
				}
				if left := tr.ExpiresAt.Sub(svc.Clock.Now()); w.Unknown || w.Median <= 0 || w.Median > left {
					t.Errorf("the dinghy lease waits for %s to end at %s (%v from now), yet its wait is %+v", tr.ID, tr.ExpiresAt, left, w)
				}
			})
		}
	}
}

// Where the classes count different GPUs of the shared node, a lease of the uncapped class holds
// none of the capped class's: the cap does not count it.
func TestCapLeavesOutAnUncappedLeaseOnOtherGPUsOfTheNode(t *testing.T) {
	svc, _ := ternService(t, "gpu:a40", "gpu:l4")
	tr := mustRequest(t, svc, "bo@tern.example", 3, "trawler")
	if tr.State != qm.Active || tr.Node != "yard1" {
		t.Fatalf("the trawler lease is %s on %q; the test needs it running on yard1", tr.State, tr.Node)
	}
	if free := catalogOf(t, svc, "ines@tern.example", "dinghy").Free; free < 3 {
		t.Errorf("trawler's GPUs on yard1 are not dinghy's, yet the catalog shows %d dinghy GPUs free, not 3 or more", free)
	}
	if l := mustRequest(t, svc, "ines@tern.example", 3, "dinghy"); l.State != qm.Active {
		t.Errorf("trawler's GPUs on yard1 are not dinghy's, yet a dinghy request for 3 is %s (%s)", l.State, l.Reason)
	}
}

// ternFleetPolicy has two classes under one capacity share, dinghy and punt, and trawler with
// none.
const ternFleetPolicy = `organization: Tern Yard
currency: SEK
timezone: America/Halifax
classes:
  - {name: dinghy, sku: A40, price_per_gpu_hour: 12, isolation: shared, max_gpus: 4, max_duration: 8h, capacity_share: 0.2}
  - {name: punt, sku: A40, price_per_gpu_hour: 12, isolation: shared, max_gpus: 4, max_duration: 8h, capacity_share: 0.2}
  - {name: trawler, sku: A40, price_per_gpu_hour: 12, isolation: shared, max_gpus: 4, max_duration: 24h}
teams:
  - {name: kelp, idp_groups: [g-kelp], budget_owners: [ines@tern.example], quota: {gpus: {dinghy: 8, punt: 8, trawler: 8}, gpu_hours_per_week: 0}}
  - {name: gull, idp_groups: [g-gull], budget_owners: [bo@tern.example], quota: {gpus: {dinghy: 8, punt: 8, trawler: 8}, gpu_hours_per_week: 0}}
backend: sim
directory:
  - {user: ines@tern.example, groups: [g-kelp]}
  - {user: bo@tern.example, groups: [g-gull]}
`

// ternFleetService is a service on ternFleetPolicy whose scheduler reports, 4 GPUs each, counted
// alike (gpu:a40) by every class that has the node: yard1 of dinghy and punt, yard2 of punt and
// trawler, pier1 of dinghy alone, net1 and net2 of trawler alone.
func ternFleetService(t *testing.T, model bool) (*qm.Service, *fakeScheduler) {
	t.Helper()
	svc, f, _, _ := schedService(t, qm.Started{State: qm.Active})
	p, err := policy.Load([]byte(ternFleetPolicy), "tern-fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	svc.Policy, svc.Directory = p, p
	if model {
		svc.Waits = waits.New()
	}
	for _, n := range []struct{ name, class string }{
		{"yard1", "dinghy"}, {"yard1", "punt"}, {"yard2", "punt"}, {"yard2", "trawler"},
		{"pier1", "dinghy"}, {"net1", "trawler"}, {"net2", "trawler"},
	} {
		f.nodes = append(f.nodes, qm.Node{Name: n.name, Class: n.class, GPUs: 4, GRES: "gpu:a40"})
	}
	if _, err := svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc, f
}

// A lease of the class without a share on a node of one shared class (punt) fills the cap that
// another shared class (dinghy) is under, though none of dinghy's nodes is its: a dinghy request
// past the cap is told beforehand that it waits, until that lease's end, as it then does.
func TestCapWaitCountsAnUncappedLeaseOnAnotherSharedClassesNode(t *testing.T) {
	for _, model := range []bool{false, true} {
		t.Run(fmt.Sprintf("predictor=%v", model), func(t *testing.T) {
			ctx := context.Background()
			svc, _ := ternFleetService(t, model)
			tr := mustRequest(t, svc, "bo@tern.example", 3, "trawler")
			if tr.State != qm.Active || tr.Node != "yard2" {
				t.Fatalf("the trawler lease is %s on %q; the test needs 3 GPUs of yard2 running", tr.State, tr.Node)
			}
			left := tr.ExpiresAt.Sub(svc.Clock.Now())
			w, err := svc.PredictWait(ctx, "dinghy", "kelp", 3)
			if err != nil {
				t.Fatal(err)
			}
			l := mustRequest(t, svc, "ines@tern.example", 3, "dinghy")
			if l.State != qm.Queued {
				t.Fatalf("trawler lease %s holds 3 of yard2's GPUs, which punt counts too, so the shared classes' cap is nearly full; yet a dinghy request for 3 is %s on %q", tr.ID, l.State, l.Node)
			}
			if w.Unknown || w.Median <= 0 || w.Median > left {
				t.Errorf("a dinghy request for 3 waits for %s to end (%v from now), yet its quote beforehand was %+v", tr.ID, left, w)
			}
			lw, err := svc.LeaseWait(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			if lw.Unknown || lw.Median <= 0 || lw.Median > left {
				t.Errorf("the queued dinghy lease waits for %s to end (%v from now), yet its wait is %+v", tr.ID, left, lw)
			}
		})
	}
}

// A lease of one shared class on a node that another shared class counts alike holds its GPUs
// once under the cap, not once on each side: a request of the other class that fits under the
// cap with it is told that no wait is expected, and starts.
func TestCapWaitCountsASharedClassesLeaseOnceOnANodeTwoCount(t *testing.T) {
	for _, model := range []bool{false, true} {
		t.Run(fmt.Sprintf("predictor=%v", model), func(t *testing.T) {
			ctx := context.Background()
			svc, _ := ternFleetService(t, model)
			pt := mustRequest(t, svc, "bo@tern.example", 3, "punt")
			if pt.State != qm.Active || pt.Node != "yard1" {
				t.Fatalf("the punt lease is %s on %q; the test needs 3 GPUs of yard1 running", pt.State, pt.Node)
			}
			w, err := svc.PredictWait(ctx, "dinghy", "kelp", 1)
			if err != nil {
				t.Fatal(err)
			}
			l := mustRequest(t, svc, "ines@tern.example", 1, "dinghy")
			if l.State != qm.Active {
				t.Fatalf("with punt lease %s holding 3 GPUs, a dinghy request for 1 is %s (%s); the test needs it to fit under the cap", pt.ID, l.State, l.Reason)
			}
			if w.Unknown || w.Median != 0 {
				t.Errorf("a dinghy request for 1 started at once, yet its quote beforehand was %+v", w)
			}
		})
	}
}

// The capacity share is of the cluster's GPUs: a node that two classes count alike (one GRES)
// holds its GPUs once, not once in each class. yard1, yard2, net1 and net2 hold 16 GPUs, a
// quarter of which is 4: a fifth dinghy GPU waits. Where the classes count different GPUs of
// yard1, the cluster has 20, a quarter 5: it starts.
func TestCapShareCountsANodeTwoClassesCountAlikeOnce(t *testing.T) {
	for _, c := range []struct {
		trawler string
		limit   int
	}{{"gpu:a40", 4}, {"gpu", 4}, {"gpu:l4", 5}} {
		t.Run(c.trawler, func(t *testing.T) {
			svc, _ := ternService(t, "gpu:a40", c.trawler)
			if l := mustRequest(t, svc, "ines@tern.example", 4, "dinghy"); l.State != qm.Active {
				t.Fatalf("a dinghy request for 4 is %s (%s); the test needs it running", l.State, l.Reason)
			}
			l := mustRequest(t, svc, "ines@tern.example", 1, "dinghy")
			switch {
			case c.limit == 4 && (l.State != qm.Queued || !strings.Contains(l.Reason, "may hold 4 GPUs")):
				t.Errorf("the cluster has 16 GPUs, a quarter of which dinghy holds; yet a fifth dinghy GPU is %s (%s)", l.State, l.Reason)
			case c.limit == 5 && l.State != qm.Active:
				t.Errorf("the cluster has 20 GPUs, and dinghy holds 4 of its 5; yet one more is %s (%s)", l.State, l.Reason)
			}
		})
	}
}

// A job outside the service on a node that two shared classes count alike holds its GPUs once
// under the cap, though the scheduler reports it on each class's side: the cluster's 20 GPUs give
// dinghy and punt 4 together, of which the job holds 2, and a dinghy request for the other 2
// starts, and is told beforehand that no wait is expected.
func TestCapCountsAnOutsideJobOnANodeTwoSharedClassesCountOnce(t *testing.T) {
	ctx := context.Background()
	svc, f := ternFleetService(t, false)
	for i := range f.nodes {
		if f.nodes[i].Name == "yard1" {
			f.nodes[i].Used = 2
		}
	}
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := svc.PredictWait(ctx, "dinghy", "kelp", 2)
	if err != nil {
		t.Fatal(err)
	}
	l := mustRequest(t, svc, "ines@tern.example", 2, "dinghy")
	if l.State != qm.Active {
		t.Errorf("a job outside the service holds 2 of yard1's GPUs, 2 of the 4 the cap leaves dinghy and punt; yet a dinghy request for the other 2 is %s (%s)", l.State, l.Reason)
	}
	if w.Unknown || w.Median != 0 {
		t.Errorf("a dinghy request for the 2 GPUs under the cap was quoted %+v, not that no wait is expected", w)
	}
}

// A lease of a class that counts GPUs of every type (gpu) on a node with GPUs of two types gets
// GPUs of a type the scheduler picks, which the service does not know: on the side of a class
// that counts one of those types, it is counted held as far as it may be (conservatively), and
// the catalog and the cap's reason say how many of those GPUs may be free after all. yard1 has 4
// a40s (dinghy's) among its 8 GPUs (trawler's): of a 6-GPU trawler lease there, 2 are a40s for
// sure, 2 more may be.
func TestAnAnyTypeLeaseIsCountedAsFarAsItMayHoldAndSaidSo(t *testing.T) {
	svc, f := ternService(t, "gpu:a40", "gpu")
	f.nodes[1].GPUs = 8 // yard1's trawler side: every GPU of the node
	if _, err := svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	tr := mustRequest(t, svc, "bo@tern.example", 6, "trawler")
	if tr.State != qm.Active || tr.Node != "yard1" {
		t.Fatalf("the trawler lease is %s on %q; the test needs 6 GPUs of yard1 running", tr.State, tr.Node)
	}
	// The cluster: yard1's 8, yard2, net1 and net2: 20 GPUs, a quarter 5. The lease holds 2 to 4
	// of dinghy's; with 4 counted, 1 is free under the cap, and up to 3.
	s := catalogOf(t, svc, "ines@tern.example", "dinghy")
	if s.Free != 1 || s.FreeUpTo != 3 {
		t.Errorf("the catalog shows %d dinghy GPUs free, up to %d; want 1, and up to 3 where trawler's lease has GPUs of the other type", s.Free, s.FreeUpTo)
	}
	l := mustRequest(t, svc, "ines@tern.example", 2, "dinghy")
	if l.State != qm.Queued || !strings.Contains(l.Reason, "hold 4 of them, 2 of which perhaps not") {
		t.Errorf("a dinghy request for 2 is %s (%q); want it queued by the cap, saying that trawler's leases hold 4, 2 of them perhaps not", l.State, l.Reason)
	}
}
