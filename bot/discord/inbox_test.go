package discord_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/store/chatstore"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// stalled is a handler whose work never ends until its context does: a process that stops
// while the command runs.
type stalled struct{ got chan string }

func (s stalled) Handle(ctx context.Context, req bot.Request) []bot.Reply {
	s.got <- req.Text
	<-ctx.Done()
	return []bot.Reply{{Text: "cut short"}}
}

// stop closes an adapter without waiting for its work, as a process that is killed stops.
func stop(t *testing.T, a *discord.Adapter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_ = a.Close(ctx)
}

// A command deferred by a process that stopped before answering it is run by another process
// once the first one's claim on it is gone, and its answer replaces the deferral Discord shows;
// it is run once. One deferred too long ago for its interaction's token is not run: its sender is
// told so by DM.
func TestADeferredCommandIsAnsweredAfterAStop(t *testing.T) {
	db := storetest.Open(t, storetest.SQLite(t))
	inbox := chatstore.Inbox{DB: db, Owner: "test", Platform: discord.Platform}
	release := func() {
		t.Helper()
		if _, err := db.ReleaseDeliveryClaims(t.Context(), discord.Platform, []string{"test"}); err != nil {
			t.Fatal(err)
		}
	}
	stuck := stalled{got: make(chan string, 1)}
	gone := newEnv(t, func(c *discord.Config) {
		c.Handler, c.Inbox, c.AnswerWithin, c.InboxClaim = stuck, inbox, time.Millisecond, time.Hour
	})
	body := discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 2})
	if r := gone.send(body); r.Type != 5 {
		t.Fatalf("answer = %+v; want a deferral (type 5)", r)
	}
	<-stuck.got // deferred, and its work started but never finished
	stop(t, gone.adapter)

	live := newEnv(t, func(c *discord.Config) { c.APIURL, c.Inbox, c.InboxClaim = gone.fake.URL, inbox, time.Hour })
	if n, err := live.adapter.Recover(t.Context()); err != nil || n != 0 {
		t.Fatalf("recovered %d commands while the first process's claim held (%v)", n, err)
	}
	release()
	if n, err := live.adapter.Recover(t.Context()); err != nil || n != 1 {
		t.Fatalf("recovered %d commands once the claim was released, want 1 (%v)", n, err)
	}
	live.wait()
	reqs := live.handler.requests()
	if len(reqs) != 1 || reqs[0].User != "alice@acme.example" || reqs[0].Key != "discord:"+discordtest.ID(body) || reqs[0].Text != "/gpu request 2" {
		t.Fatalf("the recovered command ran as %+v", reqs)
	}
	if a, ok := gone.fake.AnswerTo(discordtest.ID(body)); !ok || a.ID != "@original" || !strings.Contains(a.Text(), "You asked: /gpu request 2") {
		t.Fatalf("the deferral was not replaced by the answer: %+v", a)
	}
	// Forgetting a finished command is written in the background: wait for it, then no claim
	// released brings the command back.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		owners, err := db.DeliveryClaimers(t.Context(), discord.Platform, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if len(owners) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the answered command is still kept, claimed by %v", owners)
		}
	}
	release()
	if n, _ := live.adapter.Recover(t.Context()); n != 0 {
		t.Fatalf("recovered %d commands again", n)
	}

	// Too old: the sender is told, nothing runs.
	late := newEnv(t, func(c *discord.Config) {
		c.APIURL, c.Handler, c.Inbox, c.AnswerWithin, c.InboxClaim = gone.fake.URL, stuck, inbox, time.Millisecond, time.Hour
	})
	old := discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 3})
	late.send(old)
	<-stuck.got
	stop(t, late.adapter)
	release()
	tooLate := newEnv(t, func(c *discord.Config) {
		c.APIURL, c.Inbox, c.InboxClaim, c.ReplayWithin = gone.fake.URL, inbox, time.Hour, time.Nanosecond
	})
	if n, err := tooLate.adapter.Recover(t.Context()); err != nil || n != 1 {
		t.Fatalf("recovered %d commands, want the old one (%v)", n, err)
	}
	tooLate.wait()
	if reqs := tooLate.handler.requests(); len(reqs) != 0 {
		t.Fatalf("a command too old to run ran: %+v", reqs)
	}
	var told bool
	for _, m := range gone.fake.PostsTo(discordtest.DMChannel(alice)) {
		if strings.Contains(m.Text(), "too late to run it now") && strings.Contains(m.Text(), "/gpu request 3") {
			told = true
		}
	}
	if !told {
		t.Errorf("the sender of the command too old to run was not told: %+v", gone.fake.Posts())
	}
}

// A command answered within the acknowledgement is not kept: nothing is left to recover.
func TestAnAnswerInTheAcknowledgementKeepsNothing(t *testing.T) {
	db := storetest.Open(t, storetest.SQLite(t))
	e := newEnv(t, func(c *discord.Config) {
		c.Inbox, c.InboxClaim = chatstore.Inbox{DB: db, Owner: "test", Platform: discord.Platform}, time.Nanosecond
	})
	if r := e.send(discordtest.Command(in(alice), "gpu", "help")); r.Type != 4 {
		t.Fatalf("answer = %+v; want the answer itself (type 4)", r)
	}
	e.wait()
	time.Sleep(time.Millisecond) // past any claim
	if n, err := e.adapter.Recover(t.Context()); err != nil || n != 0 {
		t.Fatalf("recovered %d commands (%v), want none", n, err)
	}
}
