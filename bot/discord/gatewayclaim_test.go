package discord_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/bot/internal/inflight"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// stalledInbox is an inbox whose claims on what the gateway delivered wait at a gate (a database
// slow to answer) or fail (a database that is down); everything else goes through.
type stalledInbox struct {
	bot.Inbox
	gate    chan struct{} // closed: claims go on
	fail    bool
	mu      sync.Mutex
	waiting int
}

func (s *stalledInbox) Accept(ctx context.Context, cmds []bot.Accepted, claim time.Duration) ([]bool, error) {
	if len(cmds) > 0 && strings.HasPrefix(cmds[0].Key, "discord:gateway:") {
		s.mu.Lock()
		s.waiting++
		s.mu.Unlock()
		if s.fail {
			return nil, errors.New("connection refused")
		}
		<-s.gate
	}
	return s.Inbox.Accept(ctx, cmds, claim)
}

func (s *stalledInbox) claims() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting
}

// stalledReplicas starts two replicas on the database at url, their inboxes stalled at gate or
// failing (fail), delivers them alice's /gpu request and waits until both have asked the database
// for it: the fake Discord, the replicas, their error log and the interaction delivered.
func stalledReplicas(t *testing.T, url string, gate chan struct{}, fail bool) (*discordtest.Fake, []*env, *errorLog, []byte) {
	t.Helper()
	var inboxes []*stalledInbox
	fake, envs, logged := replicas(t, url, 2, func(c *discord.Config) {
		s := &stalledInbox{Inbox: c.Inbox, gate: gate, fail: fail}
		inboxes = append(inboxes, s)
		c.Inbox = s
	})
	body := discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 2})
	fake.Deliver(body)
	if !fake.WaitFor(func() bool { return inboxes[0].claims() == 1 && inboxes[1].claims() == 1 }) {
		t.Fatal("the replicas never asked the database for the interaction")
	}
	return fake, envs, logged, body
}

// Every replica is delivered the interaction, and each asks the database for it at once. When
// the database is slower to answer than a Slack acknowledgement may wait for it, or fails, a
// replica cannot tell whether another has the interaction: it runs nothing until it knows it is
// its own, so that the command runs once and is answered once, however slow the database; and a
// replica that cannot know (the database failed) runs nothing at all.
func TestAnInteractionIsAnsweredOnceWhileTheDatabaseIsSlowToClaimIt(t *testing.T) {
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			gate := make(chan struct{})
			fake, envs, logged, body := stalledReplicas(t, url(t), gate, false)
			// The database answers neither claim for longer than an acknowledgement waits for
			// the inbox.
			time.Sleep(inflight.AcceptTimeout + 200*time.Millisecond)
			close(gate)
			id := discordtest.ID(body)
			if !fake.WaitFor(func() bool { _, ok := fake.AnswerTo(id); return ok }) {
				t.Fatal("no answer")
			}
			for _, e := range envs {
				e.wait()
			}
			answers := 0
			for _, m := range fake.Answers() {
				if m.Interaction == id && m.Type != 5 {
					answers++
				}
			}
			if answers != 1 || fake.AnsweredTwice() != 0 {
				t.Errorf("answered %d times (%d more refused by Discord), want once", answers, fake.AnsweredTwice())
			}
			if n := ran(envs); n != 1 {
				t.Errorf("the command ran %d times, want once", n)
			}
			if errs := logged.errors(); len(errs) != 0 {
				t.Errorf("logged errors: %q", errs)
			}
		})
	}
	t.Run("down", func(t *testing.T) {
		fake, envs, _, _ := stalledReplicas(t, storetest.SQLite(t), nil, true)
		for _, e := range envs {
			e.wait()
		}
		if n := ran(envs); n != 0 {
			t.Errorf("the command ran %d times while no replica could claim it, want never", n)
		}
		if n := fake.AnsweredTwice(); n != 0 {
			t.Errorf("Discord refused %d answers to an interaction already answered", n)
		}
	})
}
