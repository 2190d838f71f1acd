package slack_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/internal/testkit"
)

// When Slack refuses a message's blocks (invalid_blocks, invalid_arguments, msg_too_long), the
// message still arrives as its plain text: a command's answer through the response_url, a notice
// to a channel, and the edit of a posted notice. The refusal is logged once per message, with
// Slack's code where Slack gives one (a response_url answers a bare HTTP 400).
func TestRefusedBlocksArriveAsText(t *testing.T) {
	for _, code := range []string{"invalid_blocks", "invalid_arguments", "msg_too_long"} {
		t.Run(code, func(t *testing.T) {
			e := newHarborEnv(t)
			var log testkit.SyncBuffer
			a := e.useHTTPAdapter(e.bot, func(c *slackbot.Config) { c.Logger = slog.New(slog.NewTextHandler(&log, nil)) })
			e.slack.mu.Lock()
			e.slack.refuseBlocks = code
			e.slack.mu.Unlock()

			trigger := e.command("UWIREMU", "quota")
			e.wait()
			got := e.responseTo(trigger)
			if !strings.Contains(got.Text, "seismic") || len(got.Blocks) != 0 {
				t.Errorf("/gpu quota was answered %q with %d blocks; want the quota of team seismic as text", got.Text, len(got.Blocks))
			}
			const refusal = "refused a message's blocks"
			if n := strings.Count(log.String(), refusal); n != 1 {
				t.Errorf("the refusal is logged %d times, want once:\n%s", n, log.String())
			}

			notice := bot.Reply{To: "#quake-lab", Ref: "L-9", Text: "L-9 waits for approval", Sections: []bot.Section{{Title: "Request", Text: "4 × rack for 2h"}}}
			if err := a.Send(t.Context(), notice); err != nil {
				t.Fatalf("a notice whose blocks Slack refused was not delivered: %v", err)
			}
			if n := strings.Count(log.String(), refusal); n != 2 || !strings.Contains(log.String(), "slack_error="+code) {
				t.Errorf("the notice's refusal is not logged once with Slack's %s:\n%s", code, log.String())
			}
			posts := e.postsTo("CQUAKELAB")
			if len(posts) != 1 || !strings.Contains(posts[0].Text, "L-9 waits for approval") || !strings.Contains(posts[0].Text, "4 × rack for 2h") {
				t.Fatalf("posts to #quake-lab: %+v; want the notice's text", posts)
			}
			notice.Update, notice.Text = true, "L-9 was approved"
			if err := a.Send(t.Context(), notice); err != nil {
				t.Fatalf("an edit whose blocks Slack refused failed: %v", err)
			}
			_, updates, _, _ := e.slack.snapshot()
			if len(updates) != 1 || !strings.Contains(updates[0].Text, "L-9 was approved") {
				t.Errorf("edits: %+v; want the notice's new text", updates)
			}
		})
	}
}

// A command's answer that neither the response_url nor a DM takes with its blocks reaches the
// person by DM as plain text.
func TestRefusedBlocksReachADMAsText(t *testing.T) {
	e := newHarborEnv(t)
	e.slack.mu.Lock()
	e.slack.refuseBlocks = "invalid_blocks"
	e.slack.mu.Unlock()
	trigger := e.newTrigger()
	body := strings.Replace(e.commandBody("UMERE", "quota", trigger), "response%2F", "gone%2F", 1) // a response_url that no longer works
	if code := e.signed("/slack/commands", body, nil); code != 200 {
		t.Fatalf("HTTP %d", code)
	}
	e.wait()
	dms := e.postsTo("DUMERE")
	if len(dms) != 1 || !strings.Contains(dms[0].Text, "kelp") {
		t.Errorf("DMs to UMERE: %+v; want the quota of team kelp as text", dms)
	}
}
