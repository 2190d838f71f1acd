package showback_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// otherPolicy is a policy unlike the example: another organization, currency (without a minor
// unit), time zone (+5:30), prices, classes and teams.
const otherPolicy = `organization: Kaito Research
currency: JPY
timezone: Asia/Kolkata
classes:
  - name: heavy
    sku: MI300X
    gpu_memory_gib: 192
    price_per_gpu_hour: 12.5
    isolation: exclusive
    max_gpus: 4
    max_duration: 48h
    idle_timeout: 1h
    idle_grace: 15m
teams:
  - name: genomics
    idp_groups: [g-genomics]
    budget_owners: [hiro@kaito.example]
    quota: {gpus: {heavy: 8}, gpu_hours_per_week: 400}
reports:
  showback: {schedule: "TUE 07:30", channel: "#finance-gpu", dm_budget_owners: true}
backend: sim
sim:
  nodes:
    - {name: mi, count: 1, class: heavy, gpus: 4}
`

func loadOther(t *testing.T) *policy.Policy {
	t.Helper()
	p, err := policy.Load([]byte(otherPolicy), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// GPU-hours of a class removed from the catalog since the week count toward the team's weekly
// GPU-hour quota, as they count in its GPU-hours: the share is of all it used.
func TestGoneClassCountsInTheWeeklyQuotaShare(t *testing.T) {
	p := loadOther(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location)
	lease := func(id qm.LeaseID, class string, gpus int, start, hours int) *qm.Lease {
		s := from.Add(time.Duration(start) * time.Hour)
		e := s.Add(time.Duration(hours) * time.Hour)
		return &qm.Lease{ID: id, User: "asha@kaito.example", Team: "genomics", Class: class, GPUs: gpus, State: qm.Expired,
			Price: 0.333, Priced: true, CreatedAt: s, StartedAt: s, ExpiresAt: e, EndedAt: e}
	}
	// 2 × lab (gone) for 5h and 2 × heavy for 10h: 30 GPU-hours of 400.
	leases := []*qm.Lease{lease(1, "lab", 2, 30, 5), lease(2, "heavy", 2, 40, 10)}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: leases})
	var tm *showback.Team
	for _, x := range r.Teams {
		if x.Name == "genomics" {
			tm = x
		}
	}
	if tm == nil || tm.GPUHours != 30 {
		t.Fatalf("genomics: %+v, want 30 GPU-hours", tm)
	}
	if s := tm.GPUHoursQuotaShare; s == nil || !near(*s, 30.0/400) {
		t.Errorf("genomics used 30 of its 400 weekly GPU-hours, but the share is %v", fmtShare(s))
	}
	if line := r.TeamLine(tm); !strings.Contains(line, "30.00 GPU-hours of 400.00 (7.5% of its weekly GPU-hours)") {
		t.Errorf("the team's line: %s", line)
	}
	if dm := r.OwnerDM("hiro@kaito.example", []string{"genomics"}).PlainText(); !strings.Contains(dm, "30.00 of 400.00 GPU-hours (7.5%)") {
		t.Errorf("the owner's message:\n%s", dm)
	}
}

func fmtShare(s *float64) string {
	if s == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*s, 'f', -1, 64)
}
