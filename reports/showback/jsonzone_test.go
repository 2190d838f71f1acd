package showback_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// Every time in the JSON is written in the policy's zone, as the week's from and to are: a
// reader does not get the week in +05:30 and a quota increase or a first request in UTC.
func TestJSONTimesAreInThePolicysZone(t *testing.T) {
	p := loadOther(t) // Asia/Kolkata
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location).UTC()
	inc := &qm.Lease{ID: 1, Kind: qm.KindQuota, User: "asha@kaito.example", Team: "genomics", Class: "heavy", GPUs: 2, State: qm.Expired,
		CreatedAt: from.Add(10 * time.Hour), StartedAt: from.Add(11 * time.Hour), ExpiresAt: from.Add(35 * time.Hour), EndedAt: from.Add(35 * time.Hour),
		DecidedBy: "hiro@kaito.example", DecidedAt: from.Add(11 * time.Hour), Rules: qm.QuotaRule, Because: "deadline"}
	use := &qm.Lease{ID: 2, User: "asha@kaito.example", Team: "genomics", Class: "heavy", GPUs: 1, State: qm.Expired,
		CreatedAt: from.Add(12 * time.Hour), StartedAt: from.Add(12 * time.Hour), ExpiresAt: from.Add(14 * time.Hour), EndedAt: from.Add(14 * time.Hour)}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: []*qm.Lease{inc, use},
		Firsts: []qm.TeamFirst{{Team: "genomics", FirstRequest: inc.CreatedAt, FirstLogin: from.Add(9 * time.Hour), FirstStart: use.StartedAt}}})
	var b strings.Builder
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	times := regexp.MustCompile(`"(from|to|until|generated_at|first_request|first_login)": "([^"]+)"`).FindAllStringSubmatch(b.String(), -1)
	if len(times) != 7 {
		t.Fatalf("the JSON has %d times, want 7 (the week's, the report's, the increase's and the team's firsts):\n%s", len(times), b.String())
	}
	for _, m := range times {
		if !strings.HasSuffix(m[2], "+05:30") {
			t.Errorf("%s is %s, not in the policy's zone (+05:30)", m[1], m[2])
		}
	}
}
