package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// The product counts human touches per 100 leases. /gpu approvals counted them per 100 requests
// while the weekly showback counted them per 100 leases: a budget owner read two figures under one
// name. Now /gpu approvals counts them as the showback does, naming the leases it divides by, and
// both give the same figure for the same team and week.
func TestApprovalsCountHumanTouchesPer100LeasesAsTheShowbackDoes(t *testing.T) {
	h := newHarnessOn(t, baobabPolicy)
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	const awa, yao, koffi, moussa = "awa@baobab.example", "yao@baobab.example", "koffi@baobab.example", "moussa@baobab.example"

	// equipe-vision: a lease granted at once, one denied by a budget owner, a quota increase
	// approved: 3 requests, 2 human decisions, 1 lease.
	mustOK(t, h.say(awa, "/gpu request 1 cuivre for 1h"))
	long := leaseIn(t, mustOK(t, h.say(yao, "/gpu request 1 cuivre for 10h")).Text).String()
	mustOK(t, h.say(moussa, "/gpu deny "+long+" trop long"))
	more := leaseIn(t, mustOK(t, h.say(awa, "/gpu quota request +1 cuivre for 1d because atelier")).Text).String()
	mustOK(t, h.say(moussa, "/gpu approve "+more))
	// sante-donnees, decided by someone else: not counted in moussa's figures.
	mustOK(t, h.say(koffi, "/gpu request 1 cuivre for 1h"))
	h.advance(30 * time.Minute)

	a := mustOK(t, h.say(moussa, "/gpu approvals")).Text
	want := "This week in teams equipe-vision and parole-wolof: 2 human decisions on 3 requests, 1 lease: 200.0 human touches per 100 leases."
	if !strings.Contains(a, want) {
		t.Errorf("/gpu approvals of chefs-baobab's moussa: %q, want %q", a, want)
	}
	rep := mustOK(t, h.say(moussa, "/gpu report this week equipe-vision")).PlainText()
	if !strings.Contains(rep, "200.0 per 100 leases (2 human decisions on 3 requests, 1 lease)") {
		t.Errorf("equipe-vision's showback does not give the same figure:\n%s", rep)
	}
}

// TestALeaseThatHasJustStartedIsCountedInTheWeeksLeases: a budget owner who read /gpu approvals
// in the minute a lease of their team started was told "…, no leases." while the lease ran: a
// running lease was counted as holding its GPUs up to now, which was its start. A lease running
// now holds its GPUs now, in the week, and counts.
func TestALeaseThatHasJustStartedIsCountedInTheWeeksLeases(t *testing.T) {
	h := newHarnessOn(t, stJohnsPolicy)
	const jon, thora = "jón@lab.example", "þóra@lab.example"
	mustOK(t, h.say(jon, "/gpu request 1 l40s for 90m"))
	long := leaseIn(t, mustOK(t, h.say(jon, "/gpu request 1 l40s for 1d")).Text).String()
	a := mustOK(t, h.say(thora, "/gpu approvals")).Text
	want := "This week in team sok-analyse: 0 human decisions on 2 requests, 1 lease: 0.0 human touches per 100 leases."
	if !strings.Contains(a, want) {
		t.Errorf("/gpu approvals as the lease starts: %q, want %q", a, want)
	}
	// The showback of the week so far counts it alike.
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	rep := mustOK(t, h.say(thora, "/gpu report this week sok-analyse")).PlainText()
	if !strings.Contains(rep, "Human touches: 0.0 per 100 leases (0 human decisions on 2 requests, 1 lease)") || !strings.Contains(rep, "reclaimed 0.00; 1 lease") {
		t.Errorf("the showback of the week so far as the lease starts:\n%s", rep)
	}
	mustOK(t, h.say(thora, "/gpu deny "+long+" of budget"))
	a = mustOK(t, h.say(thora, "/gpu approvals")).Text
	want = "This week in team sok-analyse: 1 human decision on 2 requests, 1 lease: 100.0 human touches per 100 leases."
	if !strings.Contains(a, want) {
		t.Errorf("/gpu approvals after a denial: %q, want %q", a, want)
	}
}
