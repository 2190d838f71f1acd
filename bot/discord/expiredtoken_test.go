package discord_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// A command whose answer comes after Discord stopped taking answers to its interaction (its
// token works for 15 minutes; the edit of the deferral is refused, 401 Invalid Webhook Token)
// ran all the same: its answer reaches the person by DM, saying why it comes there, with its
// buttons, rather than being lost with "thinking…" left on screen.
func TestAnAnswerPastTheInteractionsTokenComesByDM(t *testing.T) {
	e := newEnv(t, func(c *discord.Config) {
		c.AnswerWithin = 10 * time.Millisecond
		c.OptionsOf = func(line string) (string, []discord.OptionValue, bool) {
			n, ok := strings.CutPrefix(line, "/gpu request ")
			return "request", []discord.OptionValue{{Name: "gpus", Value: n, Known: true}}, ok
		}
	})
	e.handler.delay = 300 * time.Millisecond
	e.handler.reply = func(req bot.Request) []bot.Reply {
		return []bot.Reply{{Text: "L-9 is active: 1 × interactive until 17:00.", Actions: []bot.Action{{Label: "Release", Command: "/gpu release L-9"}}}}
	}
	body := discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 1})
	e.fake.Expire(discordtest.ID(body))
	if r := e.send(body); r.Type != 5 {
		t.Fatalf("answer type %d, want a deferral (5)", r.Type)
	}
	e.wait()
	dms := e.fake.PostsTo(discordtest.DMChannel(alice))
	if len(dms) != 1 {
		t.Fatalf("%d DMs to alice, want the answer: %+v", len(dms), dms)
	}
	if !strings.Contains(dms[0].Text(), "L-9 is active") {
		t.Errorf("the DM says %q; want the answer", dms[0].Text())
	}
	if !strings.Contains(dms[0].Text(), "/gpu request gpus:1") {
		t.Errorf("the DM says %q; want it to name the command it answers, as typed", dms[0].Text())
	}
	if _, ok := dms[0].Button("Release"); !ok {
		t.Errorf("the DM has no Release button: %+v", dms[0].Buttons)
	}
}
