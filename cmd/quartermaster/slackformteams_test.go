package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// Slack's request form, as serve sets it up, offers each person the teams a request may charge
// and the policy's data classes, their teams' first, read as the form opens, by the rule Discord
// suggests them with: with single sign-on, none before the person signs in, and after it the
// teams of the groups their identity provider gave them (not every team of the policy, A to Z).
func TestSlackFormOffersTheTeamsOfTheSignIn(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t)
	cfg := slackConfig(w.a, slackSettings{BotToken: "xoxb-x", SigningSecret: "s"}, slog.New(slog.DiscardHandler))
	if len(cfg.Choices.Teams) != 0 || len(cfg.Choices.DataClasses) != 0 || cfg.FormTeams == nil || cfg.FormDataClasses == nil {
		t.Fatalf("the form offers teams %q and data classes %q to everyone; want the person's, read as it opens", cfg.Choices.Teams, cfg.Choices.DataClasses)
	}
	offered := func(p *person) string {
		req := bot.Request{User: p.idp.Email, Account: p.acct}
		teams, mine := cfg.FormTeams(context.Background(), req)
		classes, _ := cfg.FormDataClasses(context.Background(), req)
		return strings.Join(teams, " ") + " / " + strings.Join(classes, " ") + " / " + strings.Repeat("*", mine)
	}
	kim := w.person("kim", "ai-language", "ai-vision")
	if got := offered(kim); got != " /  / " {
		t.Errorf("before signing in, kim's form offers %q; want nothing", got)
	}
	if p := w.follow(kim, w.say(kim, "/gpu login")); !strings.Contains(p.Body, kim.idp.Email) {
		t.Fatalf("kim's sign-in: %s", p.Body)
	}
	if got, want := offered(kim), "vision language / public internal / **"; got != want {
		t.Errorf("signed in, kim's form offers %q; want %q", got, want)
	}
}
