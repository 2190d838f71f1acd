package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// Where a command takes a team, Discord's mention of a team's channel (<#CHANNEL_ID>, what
// Discord writes when a channel is picked) names the team whose channel discord.channels maps to
// that id, as #team-7b-gpu does: /gpu report and /gpu quota alike. A channel id the policy does
// not map is the channel of no team.
func TestADiscordChannelMentionNamesItsTeam(t *testing.T) {
	h := newHarnessOn(t, "../bot/discord/testdata/kestrel.yaml")
	svc := &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock}
	AddReport(h.bot, svc)
	const who = "jörg@kestrel.example"
	for _, pair := range [][2]string{
		{"/gpu report team-7b", "/gpu report <#710000000000000001>"},
		{"/gpu quota team-7b", "/gpu quota <#710000000000000001>"},
		{"/gpu quota ops", "/gpu quota <#710000000000000003>"},
	} {
		want, got := h.say(who, pair[0]), h.say(who, pair[1])
		if got.Text != want.Text || got.Error != want.Error {
			t.Errorf("%s answered %q; want what %s answers, %q", pair[1], got.Text, pair[0], want.Text)
		}
	}
	if got := h.say(who, "/gpu quota <#720000000000000042>"); !got.Error || !strings.Contains(got.Text, "channel of no team") {
		t.Errorf("/gpu quota of a channel of no team: %q; want it refused as such", got.Text)
	}
	// A channel's id is no week: the refusal names the teams, as for #general.
	if got := h.say(who, "/gpu report <#720000000000000042>"); !got.Error || !strings.Contains(got.Text, "team-7b") || strings.Contains(got.Text, "ISO week") {
		t.Errorf("/gpu report of a channel of no team: %q; want a refusal naming the teams", got.Text)
	}
}
