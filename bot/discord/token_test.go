package discord_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// A bot token Discord refuses (HTTP 401: mistyped, reset since, another application's) is told
// apart from a Discord that cannot be reached: the error names DISCORD_BOT_TOKEN and where the
// Developer Portal shows the token, without showing the token.
func TestCheckTokenTellsARefusedBotToken(t *testing.T) {
	f := discordtest.New(t)
	a, err := discord.New(discord.Config{BotToken: "reset-since-then", APIURL: f.URL, Handler: &recorder{}, People: directory})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.CheckToken(context.Background())
	var refused *discord.TokenRefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("CheckToken = %v, want a *TokenRefusedError", err)
	}
	for _, want := range []string{"DISCORD_BOT_TOKEN", "401", "Bot", "Reset Token", "developer portal"} {
		if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(want)) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "reset-since-then") {
		t.Errorf("the refusal shows the token: %v", err)
	}
}

// The token Discord takes says whom it stands for.
func TestCheckTokenNamesTheBotUser(t *testing.T) {
	f := discordtest.New(t)
	a, err := discord.New(discord.Config{BotToken: discordtest.Token, APIURL: f.URL, Handler: &recorder{}, People: directory})
	if err != nil {
		t.Fatal(err)
	}
	u, err := a.CheckToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != discordtest.BotUser || u.Name == "" {
		t.Errorf("CheckToken = %+v, want the fake's bot user %s", u, discordtest.BotUser)
	}
}

// A Discord that cannot be reached says nothing of the token.
func TestCheckTokenUnreachableIsNotARefusal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	a, err := discord.New(discord.Config{BotToken: discordtest.Token, APIURL: url, Handler: &recorder{}, People: directory})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.CheckToken(context.Background())
	var refused *discord.TokenRefusedError
	if err == nil || errors.As(err, &refused) {
		t.Errorf("CheckToken with Discord unreachable = %v, want an error that is no refusal", err)
	}
}
