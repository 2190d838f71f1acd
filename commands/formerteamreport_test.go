package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// Asking for the showback of a team the policy no longer has (renamed or removed since its
// leases ran) is refused, for someone who is not a platform admin, saying that the policy no
// longer lists the team and that its platform admins see it; not naming the platform admins as
// the team's budget owners. The example (the asker's own use that week) works, and a platform
// admin gets the report.
func TestAFormerTeamsReportIsRefusedSayingThePolicyNoLongerListsIt(t *testing.T) {
	h := newHarnessOn(t, "testdata/harbor.yaml")
	const mere, tane, ops = "mere@harbor.example", "tane@harbor.example", "harbor-ops@harbor.example"
	mustOK(t, h.say(mere, "/gpu request 1 bench for 1h"))
	h.advance(2 * time.Hour)
	h.svc.Policy = renamedHarbor(t) // the service restarted on a policy where kelp is kelp-lab
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})

	r := h.say(tane, "/gpu report this week kelp")
	if !r.Error || !strings.Contains(r.Text, "no longer lists team kelp") || !strings.Contains(r.Text, ops) ||
		strings.Contains(r.Text, "budget owners of team kelp") || !strings.HasPrefix(r.Text, "The policy") {
		t.Errorf("tane asks for the report of the former team kelp: %q; want a sentence saying the policy no longer lists it and that %s sees it", r.Text, ops)
	}
	refusedWithAWorkingExample(t, h, tane, "/gpu report this week kelp", "no longer lists team kelp")
	if got := h.say(ops, "/gpu report this week kelp"); got.Error || !strings.Contains(got.PlainText(), "kelp") {
		t.Errorf("the platform admin asks for kelp's report: %q", got.PlainText())
	}
}
