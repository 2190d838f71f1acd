package showback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A new team's line names its first request first, and its first sign-in in brackets; where the
// time to first GPU runs from the sign-in, the line says so, so that it is not read as the time
// from the request it names first (08:15 sign-in, 11:00 request, 14:00 start after 2h15m in the
// queue: 5h45m, not 3h). Without a sign-in before the request, the request is the only time named.
func TestTimeToFirstGPUSaysItRunsFromTheFirstSignIn(t *testing.T) {
	p := loadAdelaide(t)
	w, _ := showback.ParseWeek("2026-W40", showback.Week{})
	from := w.Start(p.Location) // Mon 28 Sep 2026 00:00 ACST
	h := func(x float64) time.Time { return from.Add(time.Duration(x * float64(time.Hour))) }
	l := &qm.Lease{ID: 1, User: "ann@sc.example", Team: "alpha", Class: "nb", GPUs: 1, State: qm.Expired, Rules: "two",
		CreatedAt: h(59), DecidedBy: "ann@sc.example", DecidedAt: h(59.75), StartedAt: h(62), ExpiresAt: h(64), EndedAt: h(64)}
	for _, c := range []struct {
		login time.Time
		want  string
	}{
		{h(56.25), "New team: alpha asked for GPUs for the first time on Wed 30 Sep 11:00 ACST (first signed in on Wed 30 Sep 08:15 ACST); time to first GPU 5h45m, from the first sign-in\n"},
		{time.Time{}, "New team: alpha asked for GPUs for the first time on Wed 30 Sep 11:00 ACST; time to first GPU 3h\n"},
	} {
		f := qm.TeamFirst{Team: "alpha", FirstRequest: l.CreatedAt, FirstLogin: c.login, FirstStart: l.StartedAt}
		r := showback.Build(showback.Input{Policy: p, Week: w, Now: w.End(p.Location), Leases: []*qm.Lease{l}, Firsts: []qm.TeamFirst{f}})
		if text := r.Text(); !strings.Contains(text, c.want) {
			t.Errorf("the report does not say %q:\n%s", c.want, text)
		}
	}
}

// A new team's budget owner reads its time to first GPU in their own message and in /gpu report
// of the team, not only in the channel's post and the text report.
func TestNewTeamsOwnerReadsItsTimeToFirstGPU(t *testing.T) {
	p := loadAdelaide(t)
	w, _ := showback.ParseWeek("2026-W40", showback.Week{})
	from := w.Start(p.Location)
	h := func(x float64) time.Time { return from.Add(time.Duration(x * float64(time.Hour))) }
	l := &qm.Lease{ID: 1, User: "ann@sc.example", Team: "alpha", Class: "nb", GPUs: 1, State: qm.Expired,
		CreatedAt: h(59), StartedAt: h(62), ExpiresAt: h(64), EndedAt: h(64)}
	f := qm.TeamFirst{Team: "alpha", FirstRequest: l.CreatedAt, FirstLogin: h(56.25), FirstStart: l.StartedAt}
	want := "alpha asked for GPUs for the first time on Wed 30 Sep 11:00 ACST (first signed in on Wed 30 Sep 08:15 ACST); time to first GPU 5h45m, from the first sign-in"
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: w.End(p.Location), Leases: []*qm.Lease{l}, Firsts: []qm.TeamFirst{f}})
	if dm := r.OwnerDM("ann@sc.example", []string{"alpha"}).PlainText(); !strings.Contains(dm, want) {
		t.Errorf("the budget owner's message does not say %q:\n%s", want, dm)
	}
	team := showback.Build(showback.Input{Policy: p, Week: w, Now: w.End(p.Location), Leases: []*qm.Lease{l}, Firsts: []qm.TeamFirst{f}, Filter: showback.Filter{Team: "alpha"}})
	if got := team.Answer(nil).PlainText(); !strings.Contains(got, want) {
		t.Errorf("/gpu report of the team does not say %q:\n%s", want, got)
	}
}
