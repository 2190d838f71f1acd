package commands

import (
	"context"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// costSoFar is the "Cost so far" of a lease's /gpu status.
func costSoFar(t *testing.T, r bot.Reply) string {
	t.Helper()
	for _, s := range r.Sections {
		for _, f := range s.Fields {
			if f.Label == "Cost so far" {
				return f.Value
			}
		}
	}
	t.Fatalf("no cost so far in %q", r.PlainText())
	return ""
}

// pauseLease records on a running lease what the reconcile pass records when the scheduler puts
// its job back in its queue (begin) or runs it again (end).
func pauseLease(t *testing.T, h *harness, id qm.LeaseID, begin bool) {
	t.Helper()
	err := h.svc.Store.Update(context.Background(), nil, func(tx qm.Tx) error {
		l, err := tx.GetLease(context.Background(), id)
		if err != nil {
			return err
		}
		if begin {
			l.Pauses = append(l.Pauses, qm.Pause{Kind: qm.PauseRequeued, From: h.clock.Now()})
		} else {
			l.Pauses[len(l.Pauses)-1].To = h.clock.Now()
		}
		return tx.UpdateLease(context.Background(), l, l.State)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The time a lease's job waits in the scheduler's queue after a requeue is not billed: its cost
// so far stands still meanwhile, its bill in chat is for the time it held its GPUs, and its
// weeks in the showback, the wait across the week's end, add up to that bill.
func TestARequeuedWaitIsNotBilled(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, otherPolicy, "currency: EUR", "currency: JPY", "price_per_gpu_hour: 0.50", "price_per_gpu_hour: 150.5"))
	svc := &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock}
	// Sunday 6 Dec 23:30 in Berlin, half an hour before the week's end.
	h.advance(time.Date(2026, 12, 6, 22, 30, 0, 0, time.UTC).Sub(h.clock.Now()))
	id := leaseIn(t, mustOK(t, h.say("sam@borealis.example", "/gpu request 1 dev for 3h")).Text)
	h.advance(15 * time.Minute)
	pauseLease(t, h, id, true)
	before := costSoFar(t, mustOK(t, h.say("sam@borealis.example", "/gpu status "+id.String())))
	h.advance(time.Hour) // waiting in the queue across the week's end
	if after := costSoFar(t, mustOK(t, h.say("sam@borealis.example", "/gpu status "+id.String()))); after != before {
		t.Errorf("an hour in the scheduler's queue took the cost so far from %s to %s; want it to stand still", before, after)
	}
	pauseLease(t, h, id, false)
	h.advance(45 * time.Minute)
	bill := billIn(t, mustOK(t, h.say("sam@borealis.example", "/gpu release "+id.String())).Text)
	if bill != 151 {
		t.Errorf("a lease that held 1 GPU for 1h of its 2h at 150.5 JPY is billed %v JPY; want 151", bill)
	}
	w49, w50 := rowCost(t, svc, "2026-W49", "speech", "dev"), rowCost(t, svc, "2026-W50", "speech", "dev")
	if w49+w50 != bill {
		t.Errorf("the lease costs %v + %v JPY in the showback's two weeks; chat billed it %v JPY", w49, w50, bill)
	}
	if w49 != 38 {
		t.Errorf("week 49 charges %v JPY for the lease's 15 minutes before its requeue; want 38", w49)
	}
}
