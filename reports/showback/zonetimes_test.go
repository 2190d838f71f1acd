package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// The times the showback names (a quota increase's from and until, a new team's first request)
// say their zone, as chat's messages do: in the channel post nothing else says it, and in a week
// the clocks go back an hour, 01:30 comes twice.
func TestShowbackTimesSayTheirZone(t *testing.T) {
	src := strings.Replace(otherPolicy, "timezone: Asia/Kolkata", "timezone: America/New_York", 1)
	p, err := policy.Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := showback.ParseWeek("2026-W44", showback.Week{}) // New York goes back to EST on Sun 1 Nov 02:00
	first := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)  // 01:30 EDT
	second := first.Add(time.Hour)                          // 01:30 EST
	inc := &qm.Lease{ID: 1, Kind: qm.KindQuota, User: "asha@kaito.example", Team: "genomics", Class: "heavy", GPUs: 2, State: qm.Expired,
		CreatedAt: first.Add(-time.Hour), StartedAt: first, ExpiresAt: second, EndedAt: second,
		DecidedBy: "hiro@kaito.example", DecidedAt: first, Rules: qm.QuotaRule, Because: "deadline"}
	use := &qm.Lease{ID: 2, User: "asha@kaito.example", Team: "genomics", Class: "heavy", GPUs: 1, State: qm.Expired,
		CreatedAt: first, StartedAt: first, ExpiresAt: second, EndedAt: second}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: second.Add(48 * time.Hour), Leases: []*qm.Lease{inc, use},
		Firsts: []qm.TeamFirst{{Team: "genomics", FirstRequest: inc.CreatedAt, FirstStart: first}}})
	post := r.Post("#finance-gpu", nil).PlainText()
	for _, want := range []string{"Sun 1 Nov 01:30 EDT to Sun 1 Nov 01:30 EST", "for the first time on Sun 1 Nov 00:30 EDT"} {
		if !strings.Contains(post, want) {
			t.Errorf("the post does not say %q:\n%s", want, post)
		}
	}

	kolkata := loadOther(t)
	w, _ = showback.ParseWeek("2026-W48", showback.Week{})
	at := w.Start(kolkata.Location).Add(33*time.Hour + 10*time.Minute)
	use = &qm.Lease{ID: 1, User: "asha@kaito.example", Team: "genomics", Class: "heavy", GPUs: 1, State: qm.Expired,
		CreatedAt: at, StartedAt: at, ExpiresAt: at.Add(time.Hour), EndedAt: at.Add(time.Hour)}
	r = showback.Build(showback.Input{Policy: kolkata, Week: w, Now: at.Add(7 * 24 * time.Hour), Leases: []*qm.Lease{use},
		Firsts: []qm.TeamFirst{{Team: "genomics", FirstRequest: at, FirstStart: at}}})
	if want := "for the first time on Tue 24 Nov 09:10 IST"; !strings.Contains(r.Text(), want) {
		t.Errorf("the report does not say %q:\n%s", want, r.Text())
	}
}
