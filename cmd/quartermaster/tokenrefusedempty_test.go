package main

import (
	"os"
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
		dir := t.TempDir()
		env := append([]string{"QM_DATA_DIR=" + dir, "QM_HTTP_ADDR=127.0.0.1:0"}, c.env...)
		code, _, stderr := runBinary(t, t.TempDir(), env, "serve", "--demo")
		msg := strings.TrimSpace(stderr)
		if code == 0 || strings.Contains(msg, "\n") || !strings.Contains(msg, c.says) || !strings.Contains(msg, "refuses") {
			t.Errorf("%v: exit %d, want one sentence saying %s is refused; got %q", c.env, code, c.says, msg)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("%v: the refusal left %v in QM_DATA_DIR; want it empty", c.env, names)
		}
	}
}
