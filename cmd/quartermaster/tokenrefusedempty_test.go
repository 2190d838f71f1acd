package main

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// A bot token Slack or Discord refuses stops serve in one sentence before it touches the
// database: the data directory is left as empty as it was.
func TestServeRefusesARefusedTokenBeforeMakingTheDatabase(t *testing.T) {
	t.Parallel()
	slack := slackAuth(t, `{"ok":false,"error":"invalid_auth"}`, "")
	discord := discordtest.New(t)
	for _, c := range []struct {
		env  []string
		says string
	}{
		{[]string{"SLACK_BOT_TOKEN=xoxb-from-another-app", "SLACK_SIGNING_SECRET=shh", "SLACK_API_URL=" + slack.URL}, "SLACK_BOT_TOKEN"},
		{[]string{"SLACK_BOT_TOKEN=xoxb-from-another-app", "SLACK_APP_TOKEN=xapp-1-abc", "SLACK_API_URL=" + slack.URL}, "SLACK_BOT_TOKEN"},
		{[]string{"DISCORD_BOT_TOKEN=MTE4.another-apps.token", "DISCORD_API_URL=" + discord.URL}, "DISCORD_BOT_TOKEN"},
	} {
		code, msg, left := serveInEmptyDataDir(t, c.env)
		if code == 0 || strings.Contains(msg, "\n") || !strings.Contains(msg, c.says) || !strings.Contains(msg, "refuses") {
			t.Errorf("%v: exit %d, want one sentence saying %s is refused; got %q", c.env, code, c.says, msg)
		}
		if len(left) != 0 {
			t.Errorf("%v: the refusal left %v in QM_DATA_DIR; want it empty", c.env, left)
		}
	}
}
