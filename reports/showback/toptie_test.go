package showback_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// The channel post names the five teams that cost the most; when the fifth place is tied, the
// teams at the same cost that did not fit are counted under the list, so a reader knows the list
// was cut among equals, not that they cost less.
func TestTopTeamsSayWhenTheFifthPlaceIsTied(t *testing.T) {
	p := loadAdelaide(t) // nb at 0.137 KWD per GPU-hour
	w, _ := showback.ParseWeek("2026-W47", showback.Week{})
	from := w.Start(p.Location)
	week := func(hours ...int) *showback.Report {
		var leases []*qm.Lease
		for i, h := range hours {
			end := from.Add(time.Duration(1+h) * time.Hour)
			leases = append(leases, &qm.Lease{ID: qm.LeaseID(i + 1), User: "u@sc.example", Team: fmt.Sprintf("lab-%c", 'a'+i), Class: "nb", GPUs: 1,
				State: qm.Expired, CreatedAt: from.Add(time.Hour), StartedAt: from.Add(time.Hour), ExpiresAt: end, EndedAt: end})
		}
		return showback.Build(showback.Input{Policy: p, Week: w, Now: from.AddDate(0, 0, 8), Leases: leases})
	}
	top := func(r *showback.Report) string {
		for _, s := range r.Post("#showback", nil).Sections {
			if s.Title == "Top teams by cost" {
				return s.Text
			}
		}
		return ""
	}
	for _, c := range []struct {
		name  string
		hours []int
		last  string // the list's last line
		lines int
	}{
		{"eight teams at one cost", []int{1, 1, 1, 1, 1, 1, 1, 1}, "and 3 more teams at 0.137 KWD", 6},
		{"one ahead, six tied", []int{4, 1, 1, 1, 1, 1, 1}, "and 2 more teams at 0.137 KWD", 6},
		{"one tied past the fifth", []int{2, 2, 2, 2, 1, 1}, "and 1 more team at 0.137 KWD", 6},
		{"the sixth costs less", []int{2, 2, 2, 2, 2, 1}, "5. lab-e — 0.274 KWD, 2.00 GPU-hours, idle not measured", 5},
		{"five teams", []int{1, 1, 1, 1, 1}, "5. lab-e — 0.137 KWD, 1.00 GPU-hours, idle not measured", 5},
	} {
		lines := strings.Split(top(week(c.hours...)), "\n")
		if len(lines) != c.lines || lines[len(lines)-1] != c.last {
			t.Errorf("%s: the top teams read\n%s\nwant %d lines, the last %q", c.name, strings.Join(lines, "\n"), c.lines, c.last)
		}
	}
}
