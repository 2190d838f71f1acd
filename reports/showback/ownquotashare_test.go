package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A person's own report (/gpu report by someone who sees no team's showback) gives their use as a
// share of their team's weekly GPU-hour quota. It says so: "genomics: 12.00 GPU-hours of 400.00 (3.0%
// of its weekly GPU-hours)" read as the team's figure, which is 32 GPU-hours there.
func TestOwnReportSaysItsQuotaShareIsOfTheTeamsQuota(t *testing.T) {
	p := loadOther(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location)
	lease := func(id qm.LeaseID, user string, gpus, start, hours int) *qm.Lease {
		s := from.Add(time.Duration(start) * time.Hour)
		e := s.Add(time.Duration(hours) * time.Hour)
		return &qm.Lease{ID: id, User: user, Team: "genomics", Class: "heavy", GPUs: gpus, State: qm.Expired,
			Price: 12.5, Priced: true, CreatedAt: s, StartedAt: s, ExpiresAt: e, EndedAt: e}
	}
	// asha: 2 × 6h = 12 GPU-hours; ren: 4 × 5h = 20, the team 32 of 400.
	leases := []*qm.Lease{lease(1, "asha@kaito.example", 2, 30, 6), lease(2, "ren@kaito.example", 4, 40, 5)}
	in := showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: leases, Filter: showback.Filter{User: "asha@kaito.example"}}
	r := showback.Build(in)
	var text []string
	for _, s := range r.Answer(nil).Sections {
		text = append(text, s.Text)
	}
	got := strings.Join(text, "\n") + "\n" + r.Text()
	want := "genomics: your 12.00 GPU-hours, 3.0% of the team's weekly quota of 400.00 GPU-hours, 150 JPY"
	if strings.Count(got, want) != 2 || strings.Contains(got, "of its weekly GPU-hours") {
		t.Errorf("asha's own report:\n%s\nwant in the chat reply and the text: %q", got, want)
	}
	// The team's own showback keeps the team's line.
	in.Filter = showback.Filter{}
	if line := showback.Build(in).Text(); !strings.Contains(line, "genomics: 32.00 GPU-hours of 400.00 (8.0% of its weekly GPU-hours)") {
		t.Errorf("the team's showback:\n%s", line)
	}
}
