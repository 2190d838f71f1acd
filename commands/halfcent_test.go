package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A bill that comes to exactly half a cent is rounded up, as the docs promise (half away from
// zero) and as a finance person checks it by hand: 5h30m of one GPU at 3.17 EUR is 17.435 EUR,
// billed 17.44 EUR, not 17.43; 11 minutes at 0.90 EUR is 0.165 EUR, billed 0.17 EUR. The
// estimate, the reply to the request, the bill at the end and the week's showback all say so.
func TestAHalfCentBillIsRoundedUp(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, otherPolicy, "price_per_gpu_hour: 0.50", "price_per_gpu_hour: 0.90",
		"price_per_gpu_hour: 2.00", "price_per_gpu_hour: 3.17"))
	svc := &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock}

	if got := mustOK(t, h.say("rita@borealis.example", "/gpu estimate 1 bigiron 5h30m")).Text; !strings.Contains(got, "17.44 EUR") {
		t.Errorf("the estimate of 5h30m at 3.17 EUR: %s", got)
	}
	r := mustOK(t, h.say("rita@borealis.example", "/gpu request 1 bigiron for 5h30m"))
	if !strings.Contains(r.Text, "Estimated cost 17.44 EUR") {
		t.Errorf("the request's estimate of 5h30m at 3.17 EUR: %s", r.Text)
	}
	dev := leaseIn(t, mustOK(t, h.say("rolf@borealis.example", "/gpu request 1 dev for 1h")).Text)
	h.advance(11 * time.Minute)
	if got := mustOK(t, h.say("rolf@borealis.example", "/gpu release "+dev.String())).Text; !strings.Contains(got, "It used 0.18 GPU-hours, 0.17 EUR.") {
		t.Errorf("the bill of 11 minutes at 0.90 EUR: %s", got)
	}
	// 1h0m18s of one GPU is 1.005 GPU-hours: 1.01 in chat as in the showback.
	speech := leaseIn(t, mustOK(t, h.say("sam@borealis.example", "/gpu request 1 dev for 2h")).Text)
	h.advance(time.Hour + 18*time.Second)
	if got := mustOK(t, h.say("sam@borealis.example", "/gpu release "+speech.String())).Text; !strings.Contains(got, "It used 1.01 GPU-hours, 0.90 EUR.") {
		t.Errorf("the bill of 1h0m18s at 0.90 EUR: %s", got)
	}
	h.advance(5*time.Hour + 30*time.Minute - time.Hour - 18*time.Second)
	if got := texts(h.notices("rita@borealis.example")); !strings.Contains(got, "It used 5.50 GPU-hours, 17.44 EUR.") {
		t.Errorf("the bill of 5h30m at 3.17 EUR:\n%s", got)
	}
	if got := rowCost(t, svc, "this week", "robotics", "bigiron"); got != 17.44 {
		t.Errorf("the showback bills 5h30m at 3.17 EUR %v EUR, want 17.44", got)
	}
	if got := rowHours(t, svc, "this week", "speech", "dev"); got != 1.01 {
		t.Errorf("the showback has 1h0m18s of one GPU as %v GPU-hours, want 1.01", got)
	}
	if got := rowCost(t, svc, "this week", "robotics", "dev"); got != 0.17 {
		t.Errorf("the showback bills 11 minutes at 0.90 EUR %v EUR, want 0.17", got)
	}
}

// rowHours is the GPU-hours of a team's class in the week's showback.
func rowHours(t *testing.T, svc *showback.Service, week, team, class string) float64 {
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
			return row.GPUHours
		}
	}
	t.Fatalf("%s has no row for %s %s", week, team, class)
	return 0
}

// An extension is part of its lease: after the catalog's price changes (a new policy published),
// an extension asked for then is billed at the price the lease was requested at, as the rest of
// the lease, in chat and in the showback; a lease asked for after the change gets the new price.
func TestAnExtensionKeepsItsLeasesPrice(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, otherPolicy, "price_per_gpu_hour: 0.50", "price_per_gpu_hour: 2.345"))
	svc := &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock}
	a := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 1h")).Text)
	h.advance(30 * time.Minute)
	dev, _ := h.svc.Policy.Class("dev")
	dev.PricePerGPUHour = 3 // the price rises while rita's lease runs
	mustOK(t, h.say("rita@borealis.example", "/gpu extend "+a.String()+" 1h"))
	b := leaseIn(t, mustOK(t, h.say("rolf@borealis.example", "/gpu request 1 dev for 1h")).Text)
	h.advance(7*time.Minute + 13*time.Second)
	if got := mustOK(t, h.say("rolf@borealis.example", "/gpu release "+b.String())).Text; !strings.Contains(got, "It used 0.12 GPU-hours, 0.36 EUR.") {
		t.Errorf("7m13s at the new 3 EUR: %s", got)
	}
	h.advance(2 * time.Hour)
	if got := texts(h.notices("rita@borealis.example")); !strings.Contains(got, "It used 2.00 GPU-hours, 4.69 EUR.") {
		t.Errorf("2h at the 2.345 EUR the lease was requested at, its extension included:\n%s", got)
	}
	if got := rowCost(t, svc, "this week", "robotics", "dev"); got != 4.69+0.36 {
		t.Errorf("the showback bills robotics's dev %v EUR, want 4.69 + 0.36", got)
	}
}
