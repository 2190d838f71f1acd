package showback_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A report made at an instant with a fraction of a second (quartermaster report without --now,
// at the real now) writes every time of its JSON to the second, as the week's from and to are
// written: generated_at and, for a week in progress, the end of the span of the week before it
// is compared with, and the times a lease's history holds to the nanosecond.
func TestJSONTimesAreWrittenToTheSecond(t *testing.T) {
	p := loadOther(t) // Asia/Kolkata
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location)
	now := from.Add(2*24*time.Hour + 3*time.Hour + 46*time.Minute + 56*time.Second + 753348094*time.Nanosecond)
	asked := from.Add(10*time.Hour + 123456789*time.Nanosecond)
	use := &qm.Lease{ID: 1, User: "asha@kaito.example", Team: "genomics", Class: "heavy", GPUs: 1, State: qm.Expired,
		CreatedAt: asked, StartedAt: asked, ExpiresAt: asked.Add(2 * time.Hour), EndedAt: asked.Add(2 * time.Hour)}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: now, Leases: []*qm.Lease{use},
		Firsts: []qm.TeamFirst{{Team: "genomics", FirstRequest: asked, FirstLogin: asked, FirstStart: asked}}})
	var b strings.Builder
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	times := regexp.MustCompile(`"([a-z_]+)": "(\d{4}-\d\d-\d\dT[^"]+)"`).FindAllStringSubmatch(b.String(), -1)
	seen := map[string]string{}
	for _, m := range times {
		seen[m[1]] = m[2]
		if strings.Contains(m[2], ".") {
			t.Errorf("%s is %s, not to the second", m[1], m[2])
		}
	}
	if want := now.Truncate(time.Second).Format(time.RFC3339); seen["generated_at"] != want {
		t.Errorf("generated_at is %q, want %q", seen["generated_at"], want)
	}
	for _, k := range []string{"previous_to", "first_request"} {
		if seen[k] == "" {
			t.Errorf("the JSON has no %s:\n%s", k, b.String())
		}
	}
	// The report itself keeps the instant it was made at.
	if !r.GeneratedAt.Equal(now) {
		t.Errorf("the report's GeneratedAt became %v, want %v", r.GeneratedAt, now)
	}
}
