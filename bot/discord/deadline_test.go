package discord_test

import (
	"context"
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

// slowPeople is a directory that does not answer (a database that hangs) until its context ends
// or a long time has passed.
type slowPeople struct{ people }

func (p slowPeople) Person(ctx context.Context, id string) (string, bool, error) {
	select {
	case <-ctx.Done():
		return "", false, ctx.Err()
	case <-time.After(10 * time.Second):
	}
	return p.people.Person(ctx, id)
}

// TestAHungDirectoryDoesNotMissTheDeadline: when who a Discord user is cannot be found out in
// time (the database behind the accounts linked by signing in hangs), the interaction is still
// answered within Discord's three seconds, privately, saying so, and nothing runs; suggestions
// come back empty in time too.
func TestAHungDirectoryDoesNotMissTheDeadline(t *testing.T) {
	e := newEnv(t, func(c *discord.Config) {
		c.People = slowPeople{directory}
		c.Complete = func(context.Context, string, string, string) []discord.Choice {
			return []discord.Choice{{Name: "L-1", Value: "L-1"}}
		}
	})
	start := time.Now()
	r := e.send(discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 1}))
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("answered after %s; Discord gives up after 3 s", took.Round(time.Millisecond))
	}
	if r.Type != 4 || r.Data.Flags&64 == 0 || !strings.Contains(r.text(), "could not tell who you are") {
		t.Errorf("answer = %+v", r)
	}
	start = time.Now()
	e.send(discordtest.Autocomplete(in(alice), "gpu", "status", discordtest.Opt{Name: "lease", Value: "L", Focused: true}))
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("suggestions after %s", took.Round(time.Millisecond))
	}
	e.wait()
	if n := len(e.handler.requests()); n != 0 {
		t.Errorf("%d commands ran", n)
	}
}
