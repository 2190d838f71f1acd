package discord_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// A team's channel picked in a team option (Discord passes it as <#CHANNEL_ID>) names that team,
// as #team-7b-gpu does typed in Slack: the policy's discord.channels says which channel it is. A
// channel of no team is refused as Slack refuses one, naming no team.
func TestATeamsChannelPickedOnDiscordNamesTheTeam(t *testing.T) {
	k := newKestrel(t)
	byName := k.run(kin(kZoe), "quota", discordtest.Opt{Name: "team", Value: "team-7b"})
	byChannel := k.run(kin(kZoe), "quota", discordtest.Opt{Name: "team", Value: "<#" + k7bChan + ">"})
	if byChannel.text() != byName.text() {
		t.Errorf("/gpu quota team:<#%s> (#team-7b-gpu) answered\n%s\nwant what team:team-7b answers:\n%s", k7bChan, byChannel.text(), byName.text())
	}
	slack := k.slack("zoe@kestrel.example", "/gpu quota #team-7b-gpu")
	if len(slack) == 0 || slack[0].Error {
		t.Fatalf("Slack's /gpu quota #team-7b-gpu: %+v", slack)
	}

	got := k.run(kin(kJorg), "request", discordtest.Opt{Name: "gpus", Value: 1}, discordtest.Opt{Name: "class", Value: "l40s"},
		discordtest.Opt{Name: "duration", Value: "1h"}, discordtest.Opt{Name: "team", Value: "<#" + k7bChan + ">"})
	if !strings.Contains(got.text(), "Team: team-7b") {
		t.Errorf("a request with team:<#%s> (#team-7b-gpu) answered %q; want it charged to team-7b", k7bChan, got.text())
	}

	const general = "720000000000000042" // a channel of no team
	other := k.run(kin(kZoe), "quota", discordtest.Opt{Name: "team", Value: "<#" + general + ">"})
	if !strings.Contains(other.text(), "channel of no team") {
		t.Errorf("/gpu quota team:<#%s> answered %q; want it refused as the channel of no team", general, other.text())
	}
}
