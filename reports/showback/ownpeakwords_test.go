package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A person's own report gives their peak GPUs and their peak and mean share against the team's
// quota; the table's and the CSV's names for them say so, as the team line does ("your 12.00
// GPU-hours, … of the team's weekly quota"), so that "peak GPUs 2 of 8" is not read as the team's.
func TestOwnReportPeakFiguresSayTheyAreTheirsAgainstTheTeamsQuota(t *testing.T) {
	p := loadOther(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location)
	lease := func(id qm.LeaseID, user string, gpus, start, hours int) *qm.Lease {
		s := from.Add(time.Duration(start) * time.Hour)
		e := s.Add(time.Duration(hours) * time.Hour)
		return &qm.Lease{ID: id, User: user, Team: "genomics", Class: "heavy", GPUs: gpus, State: qm.Expired,
			Price: 12.5, Priced: true, CreatedAt: s, StartedAt: s, ExpiresAt: e, EndedAt: e}
	}
	leases := []*qm.Lease{lease(1, "asha@kaito.example", 2, 30, 6), lease(2, "ren@kaito.example", 4, 40, 5)}
	in := showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: leases, Filter: showback.Filter{User: "asha@kaito.example"}}
	own := showback.Build(in)
	head := func(r *showback.Report) string {
		for _, line := range strings.Split(r.Text(), "\n") {
			if strings.HasPrefix(line, "team ") {
				return line
			}
		}
		return ""
	}
	text := head(own)
	for _, want := range []string{"your peak GPUs of the team's quota", "your peak share of the team's quota", "your mean share of the team's quota"} {
		if !strings.Contains(text, want) {
			t.Errorf("asha's own report's table header:\n%s\nwant %q", text, want)
		}
	}
	csvHead := strings.SplitN(string(own.CSV()), "\n", 2)[0]
	for _, want := range []string{",own_peak_gpus,team_quota_gpus,own_peak_quota_pct,own_mean_quota_pct,", ",team_quota_gpus_most"} {
		if !strings.Contains(csvHead, want) {
			t.Errorf("asha's own CSV header:\n%s\nwant %q", csvHead, want)
		}
	}
	if !strings.HasPrefix(csvHead, strings.Join(showback.CSVHeader[:8], ",")+",") {
		t.Errorf("asha's own CSV keeps the first eight columns finance reads: %s", csvHead)
	}
	// The team's showback keeps the team's names.
	in.Filter = showback.Filter{}
	team := showback.Build(in)
	if h := head(team); strings.Contains(h, "your") || !strings.Contains(h, "peak GPUs") {
		t.Errorf("the team's table header: %s", h)
	}
	if h := strings.SplitN(string(team.CSV()), "\n", 2)[0]; h != strings.Join(showback.CSVHeader, ",") {
		t.Errorf("the team's CSV header: %s", h)
	}
}
