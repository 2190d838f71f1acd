package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	discordbot "github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/testkit"
)

// discordIDs knows people's Discord user ids by a fixed map.
type discordIDs map[string]string

func (d discordIDs) Person(_ context.Context, id string) (string, bool, error) {
	for p, u := range d {
		if u == id {
			return p, true, nil
		}
	}
	return "", false, nil
}

func (d discordIDs) UserID(_ context.Context, person string) (string, bool, error) {
	u, ok := d[policy.NameKey(person)]
	return u, ok, nil
}

// With Discord alone, a scheduled post to a team's channel that discord.channels does not map
// (the weekly showback of a team without budget owners) goes to the platform admins (the fallback
// approvers) by DM, saying which channel it was for, instead of being counted as delivered to
// nobody; the log says once which channel to add.
func TestAPostToATeamChannelDiscordCannotReachGoesToTheAdmins(t *testing.T) {
	t.Parallel()
	p, err := policy.LoadFile("../../commands/testdata/harbor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const ops, quake = "100000000000000077", "200000000000000055"
	f := discordtest.New(t)
	var log testkit.SyncBuffer
	ad, err := discordbot.New(discordbot.Config{BotToken: discordtest.Token, APIURL: f.URL,
		Handler: bot.HandlerFunc(func(context.Context, bot.Request) []bot.Reply { return nil }),
		People:  discordIDs{"harbor-ops@harbor.example": ops}, Channels: map[string]string{"#quake-lab": quake}, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ad.Close(context.Background()) })
	app := &App{Policy: p, Logger: slog.New(slog.NewTextHandler(&log, nil))}
	d := (&discordService{adapter: ad}).deliverer(app, nil)
	for range 2 {
		if err := d.Deliver(t.Context(), bot.Reply{To: "#kelp-forest", Text: "team kelp used 2.00 GPU-hours"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Deliver(t.Context(), bot.Reply{To: "#quake-lab", Text: "team seismic used 1.00 GPU-hours"}); err != nil {
		t.Fatal(err)
	}
	dms := f.PostsTo(discordtest.DMChannel(ops))
	if len(dms) != 2 || !strings.Contains(dms[0].Text(), "team kelp used 2.00 GPU-hours") || !strings.Contains(dms[0].Text(), "#kelp-forest") {
		t.Fatalf("DMs to the fallback approver: %+v; want the post meant for #kelp-forest, twice", dms)
	}
	if got := f.PostsTo(quake); len(got) != 1 {
		t.Errorf("posts to #quake-lab: %+v", got)
	}
	if n := strings.Count(log.String(), "discord.channels"); n != 1 {
		t.Errorf("the log names discord.channels %d times, want once:\n%s", n, log.String())
	}
}

// policy check, run where Discord is set up without Slack (DISCORD_BOT_TOKEN set, SLACK_BOT_TOKEN
// not), warns of each team channel discord.channels does not map, at its line; with Slack set up
// too, Slack posts there, and nothing is said.
func TestPolicyCheckWarnsOfATeamChannelDiscordCannotPostTo(t *testing.T) {
	const file = "../../commands/testdata/sydney.yaml"
	p, err := policy.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var channels []string
	for _, tm := range p.Teams {
		if tm.Channel != "" {
			channels = append(channels, tm.Channel)
		}
	}
	if len(channels) == 0 {
		t.Fatalf("%s names no team channel", file)
	}
	t.Setenv("SLACK_BOT_TOKEN", "")
	t.Setenv("DISCORD_BOT_TOKEN", "discord-token")
	stdout, stderr, code := runCLI("policy", "check", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, ch := range channels {
		if !strings.Contains(stdout, "channel "+ch+" has no Discord channel id in discord.channels") {
			t.Errorf("policy check with Discord alone does not warn of %s:\n%s", ch, stdout)
		}
	}
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-slack")
	if stdout, _, _ := runCLI("policy", "check", file); strings.Contains(stdout, "Discord cannot post") {
		t.Errorf("with Slack set up too, policy check warns of Discord:\n%s", stdout)
	}
}
