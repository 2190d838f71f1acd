package qm_test

import (
	"math/rand"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// However a lease's time is cut into spans (weeks in any time zone, the same span of the week
// before), each span's part of its bill is the bill up to the span's end less the bill up to its
// start: never negative, nothing in a span in which it held no GPU, and the parts add up to the
// bill chat gives for the lease, in a currency without decimals at a price whose bills round both
// ways, with requeues recorded as overlapping (by two replicas whose clocks are apart) or not.
func TestSpansOfALeaseChargeNoLessThanNothingAndAddUpToItsBill(t *testing.T) {
	p, err := policy.Load([]byte(`organization: Spans
currency: JPY
timezone: Australia/Lord_Howe
classes:
  - {name: pod, sku: B200, price_per_gpu_hour: 98765.43, max_gpus: 64, max_duration: 720h}
teams:
  - {name: moa, idp_groups: [g-moa], budget_owners: [mo@spans.example], quota: {gpus: {pod: 64}, gpu_hours_per_week: 0}}
backend: sim
sim:
  nodes:
    - {name: b, count: 8, class: pod, gpus: 8}
`), "spans.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(7))
	base := time.Date(2026, 9, 28, 0, 0, 0, 0, p.Location)
	for i := 0; i < 300; i++ {
		start := base.Add(time.Duration(rng.Int63n(int64(48 * time.Hour))))
		end := start.Add(time.Duration(rng.Int63n(int64(200 * time.Hour))))
		l := &qm.Lease{Kind: qm.KindWorkspace, Class: "pod", GPUs: 1 + rng.Intn(64), Price: 98765.43, Priced: true,
			StartedAt: start, ExpiresAt: end, EndedAt: end, State: qm.Expired}
		at := start
		for range rng.Intn(4) {
			from := at.Add(time.Duration(rng.Int63n(int64(40*time.Hour))) - time.Duration(rng.Int63n(int64(time.Hour)))) // may begin before the last one ended
			to := from.Add(time.Duration(rng.Int63n(int64(10 * time.Hour))))
			l.Pauses = append(l.Pauses, qm.Pause{Kind: qm.PauseRequeued, From: from, To: to})
			at = to
		}
		var cuts []time.Time
		for c := start.Add(-time.Hour); c.Before(end.Add(time.Hour)); c = c.Add(time.Duration(rng.Int63n(int64(20*time.Minute))) + time.Millisecond) {
			cuts = append(cuts, c)
		}
		cuts = append(cuts, end.Add(time.Hour))
		var sum float64
		for k := 1; k < len(cuts); k++ {
			a, b := cuts[k-1], cuts[k]
			part := qm.BillIn(p, l, a, b)
			held := qm.HeldFor(l, a, b)
			switch {
			case part < 0 || held < 0:
				t.Fatalf("lease %d: [%s, %s) held %v and is charged %v JPY", i, a, b, held, part)
			case held == 0 && part != 0:
				t.Fatalf("lease %d: [%s, %s) held no GPU and is charged %v JPY", i, a, b, part)
			}
			sum += part
		}
		if bill := qm.Bill(p, l, qm.HeldFor(l, start, end)); sum != bill {
			t.Fatalf("lease %d: its spans add up to %v JPY, its bill is %v JPY", i, sum, bill)
		}
	}
}
