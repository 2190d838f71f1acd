package commands

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// billIn reads the bill chat gave for a lease: "It used 1.00 GPU-hours, 151 JPY."
func billIn(t *testing.T, text string) float64 {
	t.Helper()
	m := regexp.MustCompile(`It used [0-9.]+ GPU-hours, ([0-9.]+) [A-Z]{3}\.`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no bill in %q", text)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// rowCost is the cost of a team's class in the week's showback.
func rowCost(t *testing.T, svc *showback.Service, week, team, class string) float64 {
	t.Helper()
	w, err := svc.ParseWeek(context.Background(), week)
	if err != nil {
		t.Fatal(err)
	}
	r, err := svc.Report(context.Background(), w, showback.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range r.Rows {
		if row.Team == team && row.Class == class {
			return row.Cost
		}
	}
	t.Fatalf("%s has no row for %s %s", week, team, class)
	return 0
}

// The showback's cost of a team's class is the sum of its leases' bills as chat gave them, each
// rounded to the currency's minor unit: two leases billed 151 JPY each cost 302 JPY, not the
// 301 JPY of their unrounded 150.5 JPY; and a lease across a week boundary costs, over its two
// weeks, the bill its owner was told (151 JPY, not 75 + 75).
func TestShowbackCostIsTheSumOfTheBillsInChat(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, otherPolicy, "currency: EUR", "currency: JPY", "price_per_gpu_hour: 0.50", "price_per_gpu_hour: 150.5"))
	svc := &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock}
	a := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 2h")).Text)
	b := leaseIn(t, mustOK(t, h.say("rolf@borealis.example", "/gpu request 1 dev for 2h")).Text)
	h.advance(time.Hour)
	bills := billIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu release "+a.String())).Text) +
		billIn(t, mustOK(t, h.say("rolf@borealis.example", "/gpu release "+b.String())).Text)
	if bills != 302 {
		t.Fatalf("two hours of dev at 150.5 JPY are billed %v JPY in chat, want 151 each", bills)
	}
	// Sunday 6 Dec 23:30 in Berlin: a lease of an hour across the week's end.
	h.advance(time.Date(2026, 12, 6, 22, 30, 0, 0, time.UTC).Sub(h.clock.Now()))
	h.notices("rita@borealis.example")
	h.notices("rolf@borealis.example")
	mustOK(t, h.say("sam@borealis.example", "/gpu request 1 dev for 1h"))
	h.advance(2 * time.Hour)
	expired := billIn(t, texts(h.notices("sam@borealis.example")))

	if got := rowCost(t, svc, "2026-W49", "robotics", "dev"); got != bills {
		t.Errorf("robotics's dev costs %v JPY in the showback; chat billed its leases %v JPY", got, bills)
	}
	w49, w50 := rowCost(t, svc, "2026-W49", "speech", "dev"), rowCost(t, svc, "2026-W50", "speech", "dev")
	if w49+w50 != expired {
		t.Errorf("the lease across the week's end costs %v + %v JPY in the showback; chat billed it %v JPY", w49, w50, expired)
	}
}
