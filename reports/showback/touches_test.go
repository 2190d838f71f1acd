package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// "Human touches per 100 leases" is per 100 leases: the people's decisions on the week's requests
// against the week's leases (the report's own lease count), whatever the requests were (quota
// increases, denied ones). optik had 10 leases and asked for 4 quota increases, 2 approved and
// 2 denied by a person: 4 touches, 40.0 per 100 leases, not 4 on 14 requests.
func TestHumanTouchesAreCountedPer100Leases(t *testing.T) {
	p := loadBerlin(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location)
	var leases []*qm.Lease
	for i := range 10 {
		s := time.Duration(i) * 5 * time.Hour
		leases = append(leases, &qm.Lease{ID: qm.LeaseID(i + 1), User: "jana@nordlicht.example", Team: "optik", Class: "a100", GPUs: 1, State: qm.Expired,
			CreatedAt: from.Add(s), StartedAt: from.Add(s), ExpiresAt: from.Add(s + time.Hour), EndedAt: from.Add(s + time.Hour)})
	}
	for i := range 4 {
		st := qm.Denied
		started := time.Time{}
		if i < 2 {
			st, started = qm.Expired, from.Add(time.Duration(i+1)*time.Hour)
		}
		leases = append(leases, &qm.Lease{ID: qm.LeaseID(20 + i), Kind: qm.KindQuota, User: "jana@nordlicht.example", Team: "optik", Class: "a100", GPUs: 1, State: st,
			CreatedAt: from.Add(time.Duration(i) * time.Hour), StartedAt: started, ExpiresAt: from.Add(time.Duration(i+2) * time.Hour), EndedAt: from.Add(time.Duration(i+2) * time.Hour),
			DecidedBy: "lars@nordlicht.example", DecidedAt: from.Add(time.Duration(i+1) * time.Hour), Rules: qm.QuotaRule})
	}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: leases})
	for _, s := range []showback.Summary{r.Total, r.Teams[0].Summary} {
		if s.Leases != 10 || s.HumanTouches != 4 {
			t.Fatalf("%d leases and %d touches, want 10 and 4", s.Leases, s.HumanTouches)
		}
		if s.TouchesPer100 == nil || !near(*s.TouchesPer100, 100*float64(s.HumanTouches)/float64(s.Leases)) {
			t.Errorf("touches per 100 leases %v, want %d × 100 ÷ %d leases", s.TouchesPer100, s.HumanTouches, s.Leases)
		}
		line := showback.TouchesLine(s)
		if !strings.HasPrefix(line, "40.0 per 100 leases") || !strings.Contains(line, "10 leases)") {
			t.Errorf("touches line %q: want 40.0 per 100 leases, naming the 10 leases it is of", line)
		}
	}
}
