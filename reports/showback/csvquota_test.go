package showback_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// The CSV alone reconciles a row's peak, quota and peak share: beside the quota at the week's
// start it gives the most the quota was during the week (what the text's "(+N)" adds to it), the
// peak share is never below the peak GPUs against that most, and never above them against the
// quota at the start. optik (4 A100s) got +4 from Tuesday noon and held 6 then, 4 on Monday: the
// CSV said peak 6, quota 4, 100 %, which no reader could square.
func TestCSVReconcilesPeakQuotaAndShareUnderAQuotaIncrease(t *testing.T) {
	p := loadBerlin(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location)
	lease := func(id int, gpus int, start, end time.Duration) *qm.Lease {
		return &qm.Lease{ID: qm.LeaseID(id), User: "jana@nordlicht.example", Team: "optik", Class: "a100", GPUs: gpus, State: qm.Expired,
			CreatedAt: from.Add(start), StartedAt: from.Add(start), ExpiresAt: from.Add(end), EndedAt: from.Add(end)}
	}
	inc := &qm.Lease{ID: 1, Kind: qm.KindQuota, User: "jana@nordlicht.example", Team: "optik", Class: "a100", GPUs: 4, State: qm.Expired,
		CreatedAt: from.Add(35 * time.Hour), StartedAt: from.Add(36 * time.Hour), ExpiresAt: from.Add(60 * time.Hour), EndedAt: from.Add(60 * time.Hour),
		DecidedBy: "jana@nordlicht.example", DecidedAt: from.Add(36 * time.Hour), Rules: qm.QuotaRule, Because: "deadline"}
	// sprache: +1 in effect from the Saturday before, +3 more from Wednesday; it held 5.
	old := &qm.Lease{ID: 5, Kind: qm.KindQuota, User: "lars@nordlicht.example", Team: "sprache", Class: "a100", GPUs: 1, State: qm.Expired,
		CreatedAt: from.Add(-50 * time.Hour), StartedAt: from.Add(-48 * time.Hour), ExpiresAt: from.Add(100 * time.Hour), EndedAt: from.Add(100 * time.Hour),
		DecidedBy: "lars@nordlicht.example", DecidedAt: from.Add(-48 * time.Hour), Rules: qm.QuotaRule}
	more := &qm.Lease{ID: 6, Kind: qm.KindQuota, User: "lars@nordlicht.example", Team: "sprache", Class: "a100", GPUs: 3, State: qm.Expired,
		CreatedAt: from.Add(50 * time.Hour), StartedAt: from.Add(50 * time.Hour), ExpiresAt: from.Add(90 * time.Hour), EndedAt: from.Add(90 * time.Hour),
		DecidedBy: "lars@nordlicht.example", DecidedAt: from.Add(50 * time.Hour), Rules: qm.QuotaRule}
	five := &qm.Lease{ID: 7, User: "lars@nordlicht.example", Team: "sprache", Class: "a100", GPUs: 5, State: qm.Expired,
		CreatedAt: from.Add(60 * time.Hour), StartedAt: from.Add(60 * time.Hour), ExpiresAt: from.Add(62 * time.Hour), EndedAt: from.Add(62 * time.Hour)}
	leases := []*qm.Lease{inc, lease(2, 4, 2*time.Hour, 6*time.Hour), lease(3, 6, 40*time.Hour, 44*time.Hour), old, more, five}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: leases})
	text := r.Text()
	for _, rec := range csvRows(t, r) {
		num := func(col string) float64 {
			v, err := strconv.ParseFloat(rec[col], 64)
			if err != nil {
				t.Fatalf("row %s/%s: column %s = %q: %v", rec["team"], rec["class"], col, rec[col], err)
			}
			return v
		}
		peak, start, most := num("peak_gpus"), num("quota_gpus"), num("quota_gpus_most")
		if most < start {
			t.Errorf("row %s/%s: the most the quota was (%v) is below its quota at the week's start (%v)", rec["team"], rec["class"], most, start)
		}
		// The text table writes the same: "peak of start (+most-start)".
		cell := fmt.Sprintf(" %v of %v ", peak, start)
		if most > start {
			cell = fmt.Sprintf(" %v of %v (+%v) ", peak, start, most-start)
		}
		if !strings.Contains(text, cell) {
			t.Errorf("row %s/%s: the text table has no %q, as the CSV's quota_gpus %v and quota_gpus_most %v say:\n%s", rec["team"], rec["class"], cell, start, most, text)
		}
		if most > 0 {
			share := num("peak_quota_pct")
			if lo := 100 * peak / most; share+0.005 < lo {
				t.Errorf("row %s/%s: peak share %v%% below %v of %v GPUs", rec["team"], rec["class"], share, peak, most)
			}
		}
	}
	got := csvRows(t, r)
	for _, want := range []struct {
		team       string
		start, max string
	}{{"optik", "4", "8"}, {"sprache", "3", "6"}} {
		for _, rec := range got {
			if rec["team"] == want.team && (rec["quota_gpus"] != want.start || rec["quota_gpus_most"] != want.max) {
				t.Errorf("%s: quota_gpus %s, quota_gpus_most %s; want %s and %s", want.team, rec["quota_gpus"], rec["quota_gpus_most"], want.start, want.max)
			}
		}
	}
	// The columns finance reads first are where they were.
	recs, _ := csv.NewReader(bytes.NewReader(r.CSV())).ReadAll()
	if got := strings.Join(recs[0][:15], ","); got != "week,team,class,gpu_hours,cost,idle_gpu_hours,reclaimed_gpu_hours,leases,observed_gpu_hours,mean_utilization_pct,peak_gpus,quota_gpus,peak_quota_pct,mean_quota_pct,currency" {
		t.Errorf("the existing columns moved: %s", got)
	}
}
