package discord_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// TestButtonsUnderAnotherCommandName: an installation whose command is not /gpu (Config.Name)
// still shows the handler's actions as buttons, and a click, or the Deny button's form, runs the
// command the button was made with, as typed commands reach the handler.
func TestButtonsUnderAnotherCommandName(t *testing.T) {
	e := newEnv(t, func(c *discord.Config) { c.Name = "qm" })
	e.handler.reply = func(req bot.Request) []bot.Reply {
		if strings.Contains(req.Text, "status") {
			return []bot.Reply{{Text: "L-7 waits.", Actions: []bot.Action{
				{Label: "Release", Command: "/gpu release L-7", Style: "danger"}, {Label: "Deny", Command: "/gpu deny L-7", Style: "danger"}}}}
		}
		return []bot.Reply{{Text: "ran " + req.Text}}
	}
	r := e.send(discordtest.Command(in(dana), "qm", "status", discordtest.Opt{Name: "lease", Value: "L-7"}))
	bs := r.buttons()
	if len(bs) != 2 || strings.Contains(r.text(), "Type it") {
		t.Fatalf("buttons = %+v, text %q", bs, r.text())
	}
	typed := e.handler.requests()[0].Text
	msg := discordtest.Message{ID: "1", ChannelID: room}
	if a := e.send(discordtest.Click(in(dana), msg, bs[0].CustomID)); !strings.Contains(a.text(), "ran "+strings.Replace(typed, "status", "release", 1)) {
		t.Errorf("the click answered %q (typed commands reach the handler as %q)", a.text(), typed)
	}
	form := e.send(discordtest.Click(in(dana), msg, bs[1].CustomID))
	if form.Type != 9 {
		t.Fatalf("Deny answered %+v; want a form", form)
	}
	if a := e.send(discordtest.Submit(in(dana), form.Data.CustomID, "reason", "too many")); !strings.Contains(a.text(), "ran /gpu deny L-7 too many") {
		t.Errorf("the form answered %q", a.text())
	}
}
