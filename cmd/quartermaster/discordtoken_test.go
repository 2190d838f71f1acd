package main

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// A bot token Discord refuses (mistyped, reset in the Developer Portal since, another
// application's) stops serve at start with a sentence naming DISCORD_BOT_TOKEN and where to copy
// the right one, instead of a service whose gateway retries for ever.
func TestServeRefusesADiscordBotTokenDiscordRefuses(t *testing.T) {
	t.Parallel()
	f := discordtest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := serveOptions{listener: ln, discord: discordSettings{BotToken: "MTE4.another-apps.token", APIURL: f.URL}}
	o.app.flags.db = "sqlite:" + filepath.Join(t.TempDir(), "qm.db")
	started := false
	o.onReady = func(string) { started = true; cancel() }
	err = serve(ctx, o)
	if started || err == nil {
		t.Fatalf("serve started (err %v)", err)
	}
	for _, want := range []string{"DISCORD_BOT_TOKEN", "Reset Token", "Developer Portal"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "another-apps") {
		t.Errorf("the refusal shows the token: %v", err)
	}
	if n := strings.Count(err.Error(), ". "); n > 0 {
		t.Errorf("the refusal is more than one sentence: %v", err)
	}
}

// A Discord that cannot be reached at start holds nothing up, as with Slack: serve starts, and
// the log says it could not ask Discord about the token.
func TestServeStartsWhenDiscordCannotBeAskedAboutTheToken(t *testing.T) {
	t.Parallel()
	down := nobodyListens(t)
	o := serveOptions{discord: discordSettings{BotToken: discordtest.Token, APIURL: down}}
	log := servedLog(t, o)
	if !strings.Contains(log, "cannot ask Discord about the bot token") {
		t.Errorf("the log does not say Discord could not be asked:\n%s", log)
	}
}

// The token Discord takes is logged with the bot user it stands for.
func TestServeLogsTheDiscordBotUser(t *testing.T) {
	t.Parallel()
	f := discordtest.New(t)
	o := serveOptions{discord: discordSettings{BotToken: discordtest.Token, APIURL: f.URL}}
	log := servedLog(t, o)
	if !strings.Contains(log, "Discord knows the bot token") || !strings.Contains(log, discordtest.BotUser) {
		t.Errorf("the log does not name the bot user:\n%s", log)
	}
}
