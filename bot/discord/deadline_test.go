package discord_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// TestADeferralIsReplacedWhenTheWorkRunsOutOfTime: a deferred command whose work runs out of
// time (it waited for a turn that never came, or the handler was slower than WorkTimeout) still
// replaces Discord's "thinking…" with its answer, instead of leaving it there until Discord
// gives up on the interaction.
func TestADeferralIsReplacedWhenTheWorkRunsOutOfTime(t *testing.T) {
	e := newEnv(t, func(c *discord.Config) { c.MaxWork, c.AnswerWithin, c.WorkTimeout = 1, time.Hour, 300*time.Millisecond })
	release := make(chan struct{})
	e.handler.reply = func(req bot.Request) []bot.Reply {
		if strings.Contains(req.Text, "request") {
			<-release
		}
		return []bot.Reply{{Text: "ran " + req.Text}}
	}
	first := make(chan response, 1)
	go func() {
		first <- e.send(discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 1}))
	}()
	if !e.fake.WaitFor(func() bool { return len(e.handler.requests()) == 1 }) {
		t.Fatal("the first command never ran")
	}
	body := discordtest.Command(in(bob), "gpu", "help")
	if r := e.send(body); r.Type != 5 {
		t.Fatalf("the second interaction was answered with type %d, want 5 (deferred)", r.Type)
	}
	// The second waits for a turn longer than its work may take.
	time.Sleep(time.Second)
	close(release)
	<-first
	e.wait()
	a, ok := e.fake.AnswerTo(discordtest.ID(body))
	if !ok || !strings.Contains(a.Text(), "too busy") {
		t.Errorf("the deferral was replaced by %+v (%v); want the busy answer", a, ok)
	}
}
