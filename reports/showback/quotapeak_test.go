package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A team that held more GPUs of a class than its quota at the week's start, under an approved
// quota increase, is not shown as over its quota: the table and the owner's message say what the
// increase allowed ("4 of 2 (+2)", not "4 of 2" beside a peak quota of 100%).
func TestPeakGPUsSayWhatAQuotaIncreaseAllowed(t *testing.T) {
	p := loadOther(t) // genomics: 8 heavy GPUs
	p.Teams[0].Quota.GPUs["heavy"] = 2
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location).UTC()
	inc := &qm.Lease{ID: 1, Kind: qm.KindQuota, User: "asha@kaito.example", Team: "genomics", Class: "heavy", GPUs: 2, State: qm.Expired,
		CreatedAt: from.Add(10 * time.Hour), StartedAt: from.Add(11 * time.Hour), ExpiresAt: from.Add(35 * time.Hour), EndedAt: from.Add(35 * time.Hour),
		DecidedBy: "hiro@kaito.example", DecidedAt: from.Add(11 * time.Hour), Rules: qm.QuotaRule, Because: "deadline"}
	use := &qm.Lease{ID: 2, User: "asha@kaito.example", Team: "genomics", Class: "heavy", GPUs: 4, State: qm.Expired,
		CreatedAt: from.Add(12 * time.Hour), StartedAt: from.Add(12 * time.Hour), ExpiresAt: from.Add(14 * time.Hour), EndedAt: from.Add(14 * time.Hour)}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: []*qm.Lease{inc, use}})
	if got := r.Text(); !strings.Contains(got, "4 of 2 (+2)") {
		t.Errorf("the table does not say the increase's 2 GPUs beside the peak of 4 and the quota of 2:\n%s", got)
	}
	if dm := r.OwnerDM("hiro@kaito.example", []string{"genomics"}).PlainText(); !strings.Contains(dm, "at most 4 of 2 GPUs at once (4 with the quota increase)") {
		t.Errorf("the owner's message:\n%s", dm)
	}
}

// An increase already in effect at the week's start is in its quota there (QuotaGPUs): the table
// and the owner's message do not add it a second time. genomics (2 heavy GPUs) had +2 from the
// Saturday before until Tuesday, and +3 from Wednesday: its quota was 4 at the week's start and
// 5 at most, never 6 or 7.
func TestAQuotaIncreaseInEffectAtTheWeeksStartIsNotCountedTwice(t *testing.T) {
	p := loadOther(t)
	p.Teams[0].Quota.GPUs["heavy"] = 2
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location).UTC()
	increase := func(id int, start, end time.Duration, gpus int) *qm.Lease {
		return &qm.Lease{ID: qm.LeaseID(id), Kind: qm.KindQuota, User: "asha@kaito.example", Team: "genomics", Class: "heavy", GPUs: gpus, State: qm.Expired,
			CreatedAt: from.Add(start - time.Hour), StartedAt: from.Add(start), ExpiresAt: from.Add(end), EndedAt: from.Add(end),
			DecidedBy: "hiro@kaito.example", DecidedAt: from.Add(start), Rules: qm.QuotaRule, Because: "deadline"}
	}
	before := increase(1, -36*time.Hour, 30*time.Hour, 2) // Sat 12:00 to Tue 06:00
	later := increase(2, 50*time.Hour, 70*time.Hour, 3)   // Wed 02:00 to Wed 22:00
	use := &qm.Lease{ID: 3, User: "asha@kaito.example", Team: "genomics", Class: "heavy", GPUs: 4, State: qm.Expired,
		CreatedAt: from.Add(2 * time.Hour), StartedAt: from.Add(2 * time.Hour), ExpiresAt: from.Add(4 * time.Hour), EndedAt: from.Add(4 * time.Hour)}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: []*qm.Lease{before, later, use}})
	if got := row(t, r, "genomics", "heavy").QuotaGPUs; got != 4 {
		t.Fatalf("quota at the week's start %d, want 4 (2 and the increase then in effect)", got)
	}
	if got := r.Text(); !strings.Contains(got, " 4 of 4 (+1) ") {
		t.Errorf("the table does not say the quota of 4 at the week's start rose by 1 at most (to 5):\n%s", got)
	}
	if dm := r.OwnerDM("hiro@kaito.example", []string{"genomics"}).PlainText(); !strings.Contains(dm, "at most 4 of 4 GPUs at once (5 with the quota increase)") {
		t.Errorf("the owner's message does not say the quota was 5 at most:\n%s", dm)
	}
}
