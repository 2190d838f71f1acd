package qm_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// manyTeamsPolicy is a policy with n teams (t00…), each with one user per team (u00@x.example).
func manyTeamsPolicy(t testing.TB, n int, extra string) *policy.Policy {
	t.Helper()
	var b strings.Builder
	b.WriteString(`organization: Load Test
classes:
  - {name: interactive, sku: L40S, price_per_gpu_hour: 1, isolation: shared, max_gpus: 4, max_duration: 8h, idle_timeout: 30m, idle_grace: 10m, capacity_share: 0.25}
  - {name: train, sku: H100, price_per_gpu_hour: 3, isolation: exclusive, max_gpus: 8, max_duration: 72h}
default_quota: {gpus: {interactive: 1, train: 0}, gpu_hours_per_week: 24}
teams:
`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {name: t%02d, idp_groups: [g%02d], budget_owners: [boss%02d@x.example], quota: {gpus: {interactive: 3, train: 8}, gpu_hours_per_week: 100000}, data_classes: [public]}\n", i, i, i)
	}
	b.WriteString(`exceptions:
  - name: over-quota
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]
    why: beyond quota
directory:
`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {user: u%02d@x.example, groups: [g%02d]}\n", i, i)
	}
	b.WriteString("sim:\n  nodes:\n    - {name: l40s, count: 4, class: interactive, gpus: 4, nvlink_islands: 4}\n    - {name: h100, count: 4, class: train, gpus: 8, nvlink_islands: 1}\n" + extra)
	p, err := policy.Load([]byte(b.String()), "load.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newService(t testing.TB, p *policy.Policy, st qm.Store) *qm.Service {
	clock := sim.NewClock(time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC))
	cl := sim.New(p, clock)
	return &qm.Service{Policy: p, Store: st, Clock: clock, Backend: cl, Telemetry: cl, Directory: p}
}

// TestConcurrentAdmissionPostgres: 500 concurrent requests from 20 teams (some delivered twice).
// Afterwards no team is over quota, shared classes stay within their capacity share, no GPU is
// given twice, every request was answered and no request made two leases.
func TestConcurrentAdmissionPostgres(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, storetest.Postgres(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const teams, perTeam = 20, 25
	p := manyTeamsPolicy(t, teams, "")
	svc := newService(t, p, st)

	type req struct {
		r    qm.LeaseRequest
		copy bool
	}
	var reqs []req
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < teams*perTeam; i++ {
		class := "interactive"
		if rng.IntN(2) == 0 {
			class = "train"
		}
		// Each user's requests differ in length: the same request asked again while it waits
		// for approval would be answered with the first.
		r := qm.LeaseRequest{User: fmt.Sprintf("u%02d@x.example", i%teams), GPUs: 1 + rng.IntN(4), Class: class,
			Duration: time.Hour + time.Duration(i/teams)*time.Minute, RequestKey: fmt.Sprintf("key-%d", i)}
		reqs = append(reqs, req{r: r})
		if i%25 == 0 { // a redelivery of the same request
			reqs = append(reqs, req{r: r, copy: true})
		}
	}
	outcomes := make([]*qm.Outcome, len(reqs))
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	startGate := make(chan struct{})
	for i := range reqs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-startGate
			outcomes[i], errs[i] = svc.Request(ctx, reqs[i].r)
		}(i)
	}
	close(startGate)
	wg.Wait()

	states := map[qm.State]int{}
	for i, o := range outcomes {
		if errs[i] != nil {
			t.Fatalf("request %d (%+v) failed: %v", i, reqs[i].r, errs[i])
		}
		switch o.Lease.State {
		case qm.Active, qm.Queued, qm.PendingApproval:
			states[o.Lease.State]++
		default:
			t.Fatalf("request %d answered %s", i, o.Lease.State)
		}
	}
	t.Logf("outcomes: %v", states)
	if states[qm.Active] == 0 || states[qm.PendingApproval] == 0 {
		t.Fatalf("the test should both grant and stop requests: %v", states)
	}

	all, err := svc.List(ctx, qm.LeaseFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != teams*perTeam {
		t.Fatalf("%d leases for %d distinct requests", len(all), teams*perTeam)
	}
	keys := map[string]bool{}
	held := map[string]int{}
	gpus := map[string]bool{}
	shared := 0
	for _, l := range all {
		if keys[l.RequestKey] {
			t.Fatalf("two leases for request %s", l.RequestKey)
		}
		keys[l.RequestKey] = true
		if l.State.Live() {
			held[l.Team+"/"+l.Class] += l.GPUs
		}
		if l.State.Running() {
			if l.Class == "interactive" {
				shared += l.GPUs
			}
			for _, g := range l.GPUIndex {
				k := fmt.Sprintf("%s/%d", l.Node, g)
				if gpus[k] {
					t.Fatalf("GPU %s given twice", k)
				}
				gpus[k] = true
			}
		}
	}
	for k, n := range held {
		team, class, _ := strings.Cut(k, "/")
		if q := p.QuotaFor(team).GPUs[class]; n > q {
			t.Errorf("team %s holds %d %s GPUs, quota %d", team, n, class, q)
		}
	}
	if limit := int(0.25 * 48); shared > limit {
		t.Errorf("interactive holds %d GPUs, capacity share allows %d", shared, limit)
	}
}

// TestQueueRespectsQuotaSQLite runs a smaller version against SQLite.
func TestConcurrentAdmissionSQLite(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, storetest.SQLite(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := manyTeamsPolicy(t, 5, "")
	svc := newService(t, p, st)
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := svc.Request(ctx, qm.LeaseRequest{User: fmt.Sprintf("u%02d@x.example", i%5), GPUs: 1 + i%3, Class: "interactive", Duration: time.Hour}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	live, _ := svc.List(ctx, qm.LeaseFilter{States: qm.LiveStates})
	per := map[string]int{}
	for _, l := range live {
		per[l.Team] += l.GPUs
	}
	for team, n := range per {
		if n > 3 {
			t.Errorf("team %s holds %d interactive GPUs, quota 3", team, n)
		}
	}
}
