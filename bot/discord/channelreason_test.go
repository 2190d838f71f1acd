package discord_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// A channel picked in text someone types (a reason: Discord writes <#CHANNEL_ID>) reads as the
// channel's name wherever it is shown, as the person saw it when they typed it and as Slack
// passes a channel, when the policy's discord.channels names it; a channel it does not name is
// left as Discord wrote it.
func TestAChannelInAReasonReadsAsItsName(t *testing.T) {
	k := newKestrel(t)
	k.run(kin(kTam), "request", discordtest.Opt{Name: "gpus", Value: 1}, discordtest.Opt{Name: "class", Value: "l40s"}, discordtest.Opt{Name: "duration", Value: "1h"})
	k.run(kin(kJorg), "deny", discordtest.Opt{Name: "lease", Value: "L-1"}, discordtest.Opt{Name: "reason", Value: "ask in <#" + k7bChan + "> or <#720000000000000042>"})
	dms := k.fake.PostsTo(discordtest.DMChannel(kTam))
	var told string
	for _, m := range dms {
		if strings.Contains(m.Text(), "denied") {
			told = unescaped(m.Text())
		}
	}
	if !strings.Contains(told, "ask in #team-7b-gpu or <#720000000000000042>") {
		t.Errorf("tam was told %q; want the reason with the channel's name", told)
	}
}
