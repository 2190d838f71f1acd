package commands

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot"
)

// helpText is the whole answer to /gpu help TOPIC asked on platform ("": Slack's words).
func helpText(t *testing.T, h *harness, who, platform, topic string) string {
	t.Helper()
	req := bot.Request{User: who, Text: "/gpu help " + topic}
	if platform != "" {
		req.Account = bot.Account{Platform: platform, Workspace: "", User: "100000000000000077"}
	}
	rs := h.bot.Handle(context.Background(), req)
	if len(rs) == 0 {
		t.Fatalf("/gpu help %s on %q got no reply", topic, platform)
	}
	got := rs[0].Text
	for _, s := range rs[0].Sections {
		got += "\n" + s.Title + ": " + s.Text
	}
	return got
}

// On Discord, /gpu help unlink says who to name as a Discord user names a person (a mention, an
// email), not as a platform:workspace:user account, which means nothing there; Slack's help
// still gives the account form. Every parameter's words on Discord fit an option's description.
func TestDiscordHelpOfUnlinkNamesThePersonInDiscordsTerms(t *testing.T) {
	h := heronOn(t)
	h.bot.SSO = helpOnlySSO{}
	const una = "una@heron.example"
	discord := helpText(t, h, una, "discord", "unlink")
	if strings.Contains(discord, "platform:workspace:user") || !strings.Contains(discord, "@") || !strings.Contains(discord, "mention") {
		t.Errorf("/gpu help unlink on Discord: %q; want the person named as a mention, without platform:workspace:user", discord)
	}
	if slack := helpText(t, h, una, "", "unlink"); !strings.Contains(slack, "platform:workspace:user") {
		t.Errorf("/gpu help unlink on Slack: %q; want the chat account form kept", slack)
	}
	for _, s := range Table() {
		for _, p := range s.Params {
			if n := utf8.RuneCountInString(p.HelpFor(true)); p.DiscordHelp != "" && n > 100 {
				t.Errorf("%s %s on Discord: %d characters, more than an option's description holds: %q", s.Name, p.Name, n, p.DiscordHelp)
			}
		}
	}
}
