package qm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/waits"
)

// fjellPolicy has two classes of its own names on the same nodes: drift (shared notebooks) and
// forge (exclusive), in kroner, with no rule sending a reservation to a budget owner.
const fjellPolicy = `organization: Fjell Lab
currency: NOK
timezone: Europe/Oslo
classes:
  - {name: drift, sku: L40S, price_per_gpu_hour: 9.5, isolation: shared, max_gpus: 2, max_duration: 8h}
  - {name: forge, sku: H100, price_per_gpu_hour: 41, isolation: exclusive, max_gpus: 8, max_duration: 48h}
teams:
  - {name: isbre, idp_groups: [g-isbre], budget_owners: [siri@fjell.example], quota: {gpus: {drift: 4, forge: 16}, gpu_hours_per_week: 0}}
  - {name: havet, idp_groups: [g-havet], budget_owners: [ola@fjell.example], quota: {gpus: {drift: 4, forge: 16}, gpu_hours_per_week: 0}}
backend: sim
directory:
  - {user: siri@fjell.example, groups: [g-isbre]}
  - {user: ola@fjell.example, groups: [g-havet]}
`

// fjellService is a service on fjellPolicy whose scheduler reports nodes, each in both classes'
// partitions with the same GPUs; its inventory is read.
func fjellService(t *testing.T, nodes ...string) (*qm.Service, *fakeScheduler) {
	t.Helper()
	svc, f, _, _ := schedService(t, qm.Started{State: qm.Active})
	p, err := policy.Load([]byte(fjellPolicy), "fjell.yaml")
	if err != nil {
		t.Fatal(err)
	}
	svc.Policy, svc.Directory = p, p
	for _, n := range nodes {
		f.nodes = append(f.nodes, qm.Node{Name: n, Class: "drift", GPUs: 8}, qm.Node{Name: n, Class: "forge", GPUs: 8})
	}
	if _, err := svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc, f
}

func catalogOf(t *testing.T, svc *qm.Service, user, class string) qm.ClassStatus {
	t.Helper()
	st, err := svc.Catalog(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Class.Name == class {
			return s
		}
	}
	t.Fatalf("the catalog has no class %s", class)
	return qm.ClassStatus{}
}

// A reservation of one class takes its node whole in every class the node is in. The catalog's
// free count of the other class says so: it never shows the node's GPUs free while a request for
// one GPU of that class waits for them.
func TestCatalogCountsAnotherClassesReservationOnASharedNode(t *testing.T) {
	ctx := context.Background()
	svc, _ := fjellService(t, "rk1")
	if s := catalogOf(t, svc, "ola@fjell.example", "drift"); s.Free != 8 || s.Capacity != 8 {
		t.Fatalf("before anything runs, drift shows %d of %d free; the test needs 8 of 8", s.Free, s.Capacity)
	}
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "siri@fjell.example", GPUs: 1, Class: "forge", Duration: 2 * time.Hour, Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if l := out.Lease; l.State != qm.Active || l.Node != "rk1" {
		t.Fatalf("the reservation is %s on %q; the test needs it running on rk1", l.State, l.Node)
	}
	if _, err := svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	s := catalogOf(t, svc, "ola@fjell.example", "drift")
	nb := mustRequest(t, svc, "ola@fjell.example", 1, "drift")
	if nb.State != qm.Queued {
		t.Fatalf("rk1 is reserved whole, yet a drift lease is %s on %q; the test needs it queued", nb.State, nb.Node)
	}
	if s.Free != 0 {
		t.Errorf("with rk1 reserved whole by %s, the catalog shows %d of %d drift GPUs free, yet a request for 1 waits", out.Lease.ID, s.Free, s.Capacity)
	}
}

// On an exclusive class, the free count is of the GPUs a request of the asker's team could be
// placed on: not those on a node where another team's lease of the class runs.
func TestCatalogOfAnExclusiveClassCountsTheAskersNodes(t *testing.T) {
	svc, _ := fjellService(t, "rk1")
	l := mustRequest(t, svc, "siri@fjell.example", 2, "forge")
	if l.State != qm.Active || l.Node != "rk1" {
		t.Fatalf("the forge lease is %s on %q; the test needs it running on rk1", l.State, l.Node)
	}
	if s := catalogOf(t, svc, "siri@fjell.example", "forge"); s.Free != 6 {
		t.Errorf("team isbre holds 2 of rk1's 8 forge GPUs; its member's catalog shows %d free, want 6", s.Free)
	}
	s := catalogOf(t, svc, "ola@fjell.example", "forge")
	other := mustRequest(t, svc, "ola@fjell.example", 1, "forge")
	if other.State != qm.Queued {
		t.Fatalf("another team's forge lease is %s on %q; the test needs it queued", other.State, other.Node)
	}
	if s.Free != 0 {
		t.Errorf("rk1 runs team isbre's forge lease, so a forge request of team havet waits; yet havet's catalog shows %d of %d forge GPUs free", s.Free, s.Capacity)
	}
}

// withGRES has the scheduler report the GRES each class counts on its nodes (drift's, then
// forge's), as Slurm's inventory does, and reads them.
func withGRES(t *testing.T, svc *qm.Service, f *fakeScheduler, drift, forge string) {
	t.Helper()
	for i := range f.nodes {
		f.nodes[i].GRES = map[string]string{"drift": drift, "forge": forge}[f.nodes[i].Class]
	}
	if _, err := svc.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Where two classes count the same GPUs of a node (the scheduler names one GRES for both), a
// lease of one holds its GPUs on the other's side of the node too, though the scheduler, which
// leaves the service's own jobs out, reports none of them used there: the catalog, placement
// and the wait of the other class count them held until the lease's end. Where the classes count
// different GPUs of the node, it holds none of the other's.
func TestALeaseHoldsItsGPUsInAnotherClassThatCountsThemAlike(t *testing.T) {
	for _, c := range []struct {
		drift, forge string
		free         int
	}{
		{"gpu:h100", "gpu:h100", 1},
		{"gpu", "gpu:h100", 1}, // drift counts GPUs of every type, forge's among them
		{"gpu:l40s", "gpu:h100", 8},
	} {
		for _, model := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s+%s/predictor=%v", c.drift, c.forge, model), func(t *testing.T) {
				ctx := context.Background()
				svc, f := fjellService(t, "rk1")
				if model {
					svc.Waits = waits.New()
				}
				withGRES(t, svc, f, c.drift, c.forge)
				big := mustRequest(t, svc, "siri@fjell.example", 7, "forge")
				if big.State != qm.Active || big.Node != "rk1" || big.Exclusive {
					t.Fatalf("the forge lease is %s on %q (reservation %v); the test needs 7 GPUs of rk1 running, not whole", big.State, big.Node, big.Exclusive)
				}
				if s := catalogOf(t, svc, "ola@fjell.example", "drift"); s.Free != c.free {
					t.Errorf("with 7 of rk1's GPUs held by forge lease %s, the catalog shows %d drift GPUs free; want %d", big.ID, s.Free, c.free)
				}
				l := mustRequest(t, svc, "ola@fjell.example", 2, "drift")
				if c.free >= 2 {
					if l.State != qm.Active {
						t.Errorf("drift has %d GPUs free, yet a request for 2 is %s (%s)", c.free, l.State, l.Reason)
					}
					return
				}
				if l.State != qm.Queued {
					t.Fatalf("drift has 1 GPU free, yet a request for 2 is %s on %q", l.State, l.Node)
				}
				w, err := svc.LeaseWait(ctx, l)
				if err != nil {
					t.Fatal(err)
				}
				if left := big.ExpiresAt.Sub(svc.Clock.Now()); w.Unknown || w.Median <= 0 || w.Median > left {
					t.Errorf("the drift lease waits for %s's GPUs until %s (%v from now), yet its wait is %+v", big.ID, big.ExpiresAt, left, w)
				}
			})
		}
	}
}
