package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// /gpu report takes a team's channel for the team, as the other commands that take a team do:
// #quake-lab is team seismic's showback; a channel of no team is refused naming the teams.
func TestAReportOfATeamsChannelIsThatTeams(t *testing.T) {
	h := newHarnessOn(t, "testdata/harbor.yaml")
	svc := &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock}
	AddReport(h.bot, svc)
	want := h.say("ines@harbor.example", "/gpu report seismic")
	if want.Error {
		t.Fatalf("/gpu report seismic: %s", want.Text)
	}
	for _, line := range []string{"/gpu report #quake-lab", "/gpu report #Quake-Lab", "/gpu report last week #quake-lab"} {
		got := h.say("ines@harbor.example", line)
		if got.Error || !strings.Contains(got.Text, "seismic") {
			t.Errorf("%s: %q; want the showback of team seismic", line, got.Text)
		}
	}
	if got := h.say("ines@harbor.example", "/gpu report #general"); !got.Error || !strings.Contains(got.Text, "seismic") {
		t.Errorf("/gpu report #general: %q; want a refusal naming the teams", got.Text)
	}
}
