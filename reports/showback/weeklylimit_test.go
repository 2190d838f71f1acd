package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A team without a weekly GPU-hour limit (no gpu_hours_per_week) has none in the showback either,
// also in a week with an approved quota increase: the increase's hours are not its quota.
func TestAnIncreaseGivesNoWeeklyQuotaToATeamWithout(t *testing.T) {
	src := strings.Replace(string(docs.ExamplePolicy), "quota: {gpus: {interactive: 2, train: 8}, gpu_hours_per_week: 300}", "quota: {gpus: {interactive: 2, train: 8}}", 1)
	if src == string(docs.ExamplePolicy) {
		t.Fatal("the example's language quota changed")
	}
	p, err := policy.Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(chicago)
	inc := &qm.Lease{ID: 1, Kind: qm.KindQuota, User: "maya@acme.example", Team: "language", Class: "train", GPUs: 8, State: qm.Active,
		CreatedAt: from.Add(12 * time.Hour), StartedAt: from.Add(24 * time.Hour), ExpiresAt: from.Add(48 * time.Hour),
		DecidedBy: "lee@acme.example", DecidedAt: from.Add(24 * time.Hour), Rules: qm.QuotaRule, Because: "deadline"}
	big := &qm.Lease{ID: 2, User: "maya@acme.example", Team: "language", Class: "train", GPUs: 16, State: qm.Expired,
		CreatedAt: from.Add(30 * time.Hour), StartedAt: from.Add(30 * time.Hour), ExpiresAt: from.Add(42 * time.Hour), EndedAt: from.Add(42 * time.Hour)}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: []*qm.Lease{inc, big}})
	for _, tm := range r.Teams {
		if tm.Name == "language" && (tm.GPUHoursQuota != 0 || tm.GPUHoursQuotaShare != nil) {
			t.Errorf("language has no weekly GPU-hour quota, but the showback gives it %.2f GPU-hours, share %v", tm.GPUHoursQuota, *tm.GPUHoursQuotaShare)
		}
	}
}
