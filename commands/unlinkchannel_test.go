package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
)

// linkedSSO is single sign-on where every chat account is linked to one email, with groups
// current.
type linkedSSO struct {
	helpOnlySSO
	email string
}

func (s linkedSSO) Link(_ context.Context, a qm.Account) (*qm.AccountLink, bool, error) {
	return &qm.AccountLink{Account: a, Email: s.email}, true, nil
}

// On Discord, a channel picked in /gpu unlink's who option, which reaches the command as the
// channel's name when the policy's discord.channels names it (#team-7b-gpu) and as Discord's
// <#CHANNEL_ID> otherwise, is refused as a channel, not a person, either way.
func TestUnlinkOfAChannelOnDiscordSaysItIsAChannel(t *testing.T) {
	h := newHarnessOn(t, "../bot/discord/testdata/kestrel.yaml")
	h.bot.SSO = linkedSSO{email: "jörg@kestrel.example"}
	for _, arg := range []string{"#team-7b-gpu", "<#720000000000000042>"} {
		rs := h.bot.Handle(context.Background(), bot.Request{User: "jörg@kestrel.example", Text: "/gpu unlink " + arg,
			Account: bot.Account{Platform: "discord", User: "810000000000000002"}})
		if len(rs) == 0 || !rs[0].Error || !strings.Contains(rs[0].Text, "is a Discord channel, not a person") {
			t.Errorf("/gpu unlink who:%s on Discord answered %+v; want it refused as a channel", arg, rs)
		}
	}
}
