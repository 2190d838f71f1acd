package qm_test

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// A lease is billed up to the earlier of now, its end and its expiry: one past its expiry that
// nothing has ended yet costs what it cost at its expiry, whether asked for its bill so far
// (chat) or for the part of it in a span (the showback), and its held time stops there too.
func TestALeasePastItsExpiryIsBilledUpToItsExpiry(t *testing.T) {
	p, err := policy.Load([]byte(`organization: Expiry
currency: EUR
timezone: Europe/Berlin
classes:
  - {name: big, sku: H100, price_per_gpu_hour: 2.75, max_gpus: 8, max_duration: 72h}
teams:
  - {name: owl, idp_groups: [g-owl], budget_owners: [ow@expiry.example], quota: {gpus: {big: 8}, gpu_hours_per_week: 0}}
backend: sim
sim:
  nodes:
    - {name: n, count: 1, class: big, gpus: 8}
`), "expiry.yaml")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	l := &qm.Lease{Kind: qm.KindWorkspace, Class: "big", GPUs: 3, StartedAt: start, ExpiresAt: start.Add(90 * time.Minute), State: qm.Active}
	want := qm.Bill(p, l, 90*time.Minute)
	for _, late := range []time.Duration{0, time.Minute, 5 * time.Hour} {
		now := l.ExpiresAt.Add(late)
		if got := qm.BillUpTo(p, l, now); got != want {
			t.Errorf("%v past its expiry, a 90-minute lease of 3 GPUs at 2.75 EUR is billed %v so far; want %v", late, got, want)
		}
		if got := qm.BillIn(p, l, start.Add(-time.Hour), now); got != want {
			t.Errorf("%v past its expiry, the span holding the whole lease charges %v; want %v", late, got, want)
		}
		if got := qm.HeldFor(l, start, now); got != 90*time.Minute {
			t.Errorf("%v past its expiry, the lease held its GPUs %v; want 1h30m", late, got)
		}
	}
	if got := qm.BillIn(p, l, l.ExpiresAt, l.ExpiresAt.Add(time.Hour)); got != 0 {
		t.Errorf("the hour after its expiry charges %v; want nothing", got)
	}
	// Ended by the loop later than its expiry, it is billed up to its end, as the showback bills it.
	l.EndedAt, l.State = l.ExpiresAt.Add(2*time.Minute), qm.Expired
	if got, want := qm.BillUpTo(p, l, l.EndedAt.Add(time.Hour)), qm.Bill(p, l, 92*time.Minute); got != want {
		t.Errorf("a lease ended 2 minutes after its expiry is billed %v; want %v, up to its end", got, want)
	}
}
