package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// The chart, which is posted and forwarded on its own, says what the week cost in the policy's
// currency beside its GPU-hours.
func TestChartSaysTheWeeksCostInTheCurrency(t *testing.T) {
	p := loadOther(t) // JPY, 12.5 per GPU-hour
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location)
	use := &qm.Lease{ID: 1, User: "asha@kaito.example", Team: "genomics", Class: "heavy", GPUs: 3, State: qm.Expired,
		CreatedAt: from.Add(time.Hour), StartedAt: from.Add(time.Hour), ExpiresAt: from.Add(5 * time.Hour), EndedAt: from.Add(5 * time.Hour)}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: []*qm.Lease{use}})
	svg, err := r.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if want := "12.00 GPU-hours, 150 JPY, "; !strings.Contains(string(svg), want) {
		t.Errorf("the chart does not say %q:\n%s", want, svg)
	}
}
