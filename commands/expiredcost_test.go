package commands

import (
	"context"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A lease past its expiry that the loop has not ended yet costs, in chat's "Cost so far", what
// it cost at its expiry, as the showback bills it: both stop at the expiry, so they never disagree.
func TestCostSoFarStopsAtTheLeasesExpiry(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, otherPolicy, "currency: EUR", "currency: JPY", "price_per_gpu_hour: 0.50", "price_per_gpu_hour: 150.5"))
	svc := &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock}
	// Tuesday 1 Dec 09:00 UTC, well inside week 49.
	h.advance(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).Sub(h.clock.Now()))
	id := leaseIn(t, mustOK(t, h.say("sam@borealis.example", "/gpu request 1 dev for 2h")).Text)
	var l *qm.Lease
	err := h.svc.Store.View(context.Background(), func(tx qm.Tx) error {
		var err error
		l, err = tx.GetLease(context.Background(), id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if l.ExpiresAt.IsZero() {
		t.Fatalf("lease %s did not start: %s", id, l.State)
	}
	status := func() string {
		return costSoFar(t, mustOK(t, h.say("sam@borealis.example", "/gpu status "+id.String())))
	}
	h.clock.Set(l.ExpiresAt) // the loop has not run since
	atExpiry := status()
	h.clock.Set(l.ExpiresAt.Add(3 * time.Hour))
	if later := status(); later != atExpiry {
		t.Errorf("3h past its expiry, before the loop ended it, a lease's cost so far went from %s to %s; want it to stay at %s, what it cost at its expiry", atExpiry, later, atExpiry)
	}
	if got := rowCost(t, svc, "2026-W49", "speech", "dev"); got != 301 {
		t.Errorf("the showback bills a 2h lease at 150.5 JPY %v JPY; want 301", got)
	}
}
