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
