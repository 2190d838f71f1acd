package main

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/testkit"
)

// With neither Slack nor Discord on, serve says why the scheduled week is not posted: no chat
// adapter is on (not that Slack alone is off, which with Discord on would not stop it), and that
// quartermaster report still renders the week.
func TestServeSaysNoChatAdapterPostsTheWeek(t *testing.T) {
	t.Parallel()
	p, err := policy.LoadFile("../../commands/testdata/other.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Reports.Showback.Schedule == "" {
		t.Fatal("the policy schedules no showback")
	}
	var log testkit.SyncBuffer
	app := &App{Policy: p, Logger: slog.New(slog.NewTextHandler(&log, nil))}
	// As serve does: Discord's deliverer over Slack's, with neither on.
	d := (&discordService{}).deliverer(app, nil)
	stop, err := startShowback(app, d, app.Logger)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	got := log.String()
	for _, want := range []string{"the weekly showback is not posted: no chat adapter is on (neither SLACK_BOT_TOKEN nor DISCORD_BOT_TOKEN is set)",
		"quartermaster report renders any week on demand"} {
		if !strings.Contains(got, want) {
			t.Errorf("the log does not say %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Slack is off") {
		t.Errorf("the log blames Slack alone:\n%s", got)
	}
}
