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
