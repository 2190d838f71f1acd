package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// The well-connected line gives each of its numbers its words: how many multi-GPU leases got one
// NVLink island, of how many, and the share; no bare number in parentheses.
func TestWellConnectedLineNamesItsCounts(t *testing.T) {
	p := loadAdelaide(t)
	w, _ := showback.ParseWeek("2026-W47", showback.Week{})
	from := w.Start(p.Location)
	var leases []*qm.Lease
	for i, c := range []qm.Connection{qm.ConnectionIsland, qm.ConnectionSpread, qm.ConnectionSpread} {
		leases = append(leases, &qm.Lease{ID: qm.LeaseID(i + 1), User: "olga@sc.example", Team: "computational-neuroscience-and-cognitiv", Class: "big8",
			GPUs: 4, State: qm.Expired, Connection: c, CreatedAt: from.Add(time.Hour), StartedAt: from.Add(time.Hour),
			ExpiresAt: from.Add(3 * time.Hour), EndedAt: from.Add(3 * time.Hour)})
	}
	for _, c := range []struct {
		n    int
		want string
	}{
		{1, "1 of 1 multi-GPU lease on one node got one NVLink island (100.0%)"},
		{3, "1 of 3 multi-GPU leases on one node got one NVLink island (33.3%)"},
	} {
		r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.AddDate(0, 0, 8), Leases: leases[:c.n]})
		for what, s := range map[string]string{"text": r.Text(), "post": replyText(r.Post("#showback", nil))} {
			if !strings.Contains(s, c.want) {
				t.Errorf("%d leases: the %s does not say %q:\n%s", c.n, what, c.want, s)
			}
		}
	}
}
