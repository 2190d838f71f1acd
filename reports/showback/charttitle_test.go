package showback_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// The chart's title and its subtitle (the week's days, zone, GPU-hours, cost and idle share) are
// aligned alike: both start at the chart's left edge, the title above, whatever the widths of
// the two lines.
func TestChartTitleAndSubtitleAreAlignedAlike(t *testing.T) {
	for _, c := range []struct {
		name  string
		load  func(*testing.T) *policy.Policy
		team  string
		class string
		week  string
	}{
		{"yen", loadOther, "genomics", "heavy", "2026-W48"},
		{"dinars", loadAdelaide, "alpha", "nb", "2026-W47"},
	} {
		p := c.load(t)
		w, _ := showback.ParseWeek(c.week, showback.Week{})
		from := w.Start(p.Location)
		l := &qm.Lease{ID: 1, User: "u@example.org", Team: c.team, Class: c.class, GPUs: 1, State: qm.Expired,
			CreatedAt: from.Add(time.Hour), StartedAt: from.Add(time.Hour), ExpiresAt: from.Add(5 * time.Hour), EndedAt: from.Add(5 * time.Hour)}
		r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.AddDate(0, 0, 8), Leases: []*qm.Lease{l}})
		svg, err := r.SVG()
		if err != nil {
			t.Fatal(err)
		}
		find := func(prefix string) (x, y int) {
			m := regexp.MustCompile(`<text x="(-?\d+)" y="(-?\d+)"[^>]*>` + regexp.QuoteMeta(prefix)).FindStringSubmatch(string(svg))
			if m == nil {
				t.Fatalf("%s: the chart has no text starting %q:\n%s", c.name, prefix, svg)
			}
			x, _ = strconv.Atoi(m[1])
			y, _ = strconv.Atoi(m[2])
			return x, y
		}
		tx, ty := find("GPU-hours per team, " + c.week)
		sx, sy := find(r.Span())
		if tx != sx || ty >= sy {
			t.Errorf("%s: the title is at x %d, y %d and the subtitle at x %d, y %d; want both at one x, the title above", c.name, tx, ty, sx, sy)
		}
	}
}
