package discord_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/chatstore"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// errorLog counts what is logged as an error.
type errorLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *errorLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		l.mu.Lock()
		l.msgs = append(l.msgs, r.Message)
		l.mu.Unlock()
	}
	return nil
}
func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *errorLog) WithGroup(string) slog.Handler      { return l }
func (l *errorLog) errors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

// replicas are n adapters in gateway mode on one fake Discord, sharing the database at url as
// replicas of one service share theirs, each with its gateway open.
func replicas(t testing.TB, url string, n int, adjust func(*discord.Config)) (*discordtest.Fake, []*env, *errorLog) {
	t.Helper()
	db := storetest.Open(t, url)
	fake := discordtest.New(t)
	logged := &errorLog{}
	var envs []*env
	for i := range n {
		owner := string(rune('a' + i))
		e := newEnv(t, func(c *discord.Config) {
			c.PublicKey, c.APIURL, c.Logger = "", fake.URL, slog.New(logged)
			c.Inbox = chatstore.Inbox{DB: db, Owner: owner, Platform: discord.Platform}
			if adjust != nil {
				adjust(c)
			}
		})
		e.fake = fake
		envs = append(envs, e)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- e.adapter.RunGateway(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		if !fake.WaitFor(func() bool { return fake.Clients() == len(envs) }) {
			t.Fatalf("replica %s never opened the gateway", owner)
		}
	}
	return fake, envs, logged
}

// ran is how many commands the replicas' handlers ran, all together.
func ran(envs []*env) int {
	n := 0
	for _, e := range envs {
		n += len(e.handler.requests())
	}
	return n
}

// With several replicas, each with the gateway open, Discord delivers every interaction to each
// of them: one replica runs it and answers it, once, and the others leave it alone, so no
// command runs twice and Discord refuses no second answer (nothing is logged as an error). So it
// is for a command answered at once, one whose answer is deferred, a button and a refusal; on
// SQLite and on PostgreSQL. The suggestions for an option being typed are shown once too: every
// replica may answer them, Discord keeps the first answer, and the others' refused answers are
// no error.
func TestAnInteractionIsAnsweredOnceBySeveralReplicas(t *testing.T) {
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			for _, slow := range []bool{false, true} {
				var inboxes []*keys
				fake, envs, logged := replicas(t, url(t), 2, func(c *discord.Config) {
					if slow {
						c.AnswerWithin = time.Millisecond
					}
					k := &keys{Inbox: c.Inbox}
					inboxes = append(inboxes, k)
					c.Inbox = k
				})
				if slow {
					for _, e := range envs {
						e.handler.delay = 50 * time.Millisecond
					}
				}
				check := func(what string, body []byte, wantRuns int) {
					t.Helper()
					before, refused := ran(envs), fake.AnsweredTwice()
					if n := fake.Deliver(body); n != len(envs) {
						t.Fatalf("%s: delivered to %d replicas, want %d", what, n, len(envs))
					}
					id := discordtest.ID(body)
					if !fake.WaitFor(func() bool { m, ok := fake.AnswerTo(id); return ok && m.Type != 5 }) {
						t.Fatalf("%s (slow %v): no answer", what, slow)
					}
					// Every replica has had its say: each has been told whether its claim was
					// kept (suggestions, claimed by none, are answered by each, and Discord refuses
					// all answers but the first), and what it started since is done.
					if !fake.WaitFor(func() bool {
						if wantRuns == 0 && strings.HasPrefix(what, "suggestions") {
							return fake.AnsweredTwice() == refused+len(envs)-1
						}
						for _, k := range inboxes {
							if !slices.Contains(k.asked(), "discord:gateway:"+id) {
								return false
							}
						}
						return true
					}) {
						t.Fatalf("%s (slow %v): a replica never took its turn", what, slow)
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
					if answers != 1 {
						t.Errorf("%s (slow %v): answered %d times, want once", what, slow, answers)
					}
					if got := ran(envs) - before; got != wantRuns {
						t.Errorf("%s (slow %v): ran %d times, want %d", what, slow, got, wantRuns)
					}
				}
				check("/gpu request", discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 2}), 1)
				check("/gpu help", discordtest.Command(in(bob), "gpu", "help"), 1)
				check("an option the command does not have", discordtest.Command(in(bob), "gpu", "status", discordtest.Opt{Name: "lease", Value: "L-1"}, discordtest.Opt{Name: "colour", Value: "red"}), 0)
				check("a subcommand not offered here", discordtest.Command(in(bob), "gpu", "estimatee"), 1)
				if n := fake.AnsweredTwice(); n != 0 {
					t.Errorf("(slow %v) Discord refused %d answers to interactions already answered", slow, n)
				}
				check("suggestions", discordtest.Autocomplete(in(alice), "gpu", "status", discordtest.Opt{Name: "lease", Value: "L-", Focused: true}), 0)
				if errs := logged.errors(); len(errs) != 0 {
					t.Errorf("(slow %v) logged errors: %q", slow, errs)
				}
			}
		})
	}
}

// keys records the keys a replica's inbox is asked to keep.
type keys struct {
	bot.Inbox
	mu   sync.Mutex
	kept []string
}

// Accept records the keys once the inbox has answered.
func (k *keys) Accept(ctx context.Context, cmds []bot.Accepted, claim time.Duration) ([]bool, error) {
	kept, err := k.Inbox.Accept(ctx, cmds, claim)
	k.mu.Lock()
	for _, c := range cmds {
		k.kept = append(k.kept, c.Key)
	}
	k.mu.Unlock()
	return kept, err
}

func (k *keys) asked() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.kept...)
}

// The suggestions for an option being typed, which only read, are answered by every replica the
// gateway delivers them to without a claim in the database first: a keystroke neither waits for
// the database nor leaves a row in it. The person typing sees one list of suggestions (Discord
// keeps the first answer), and a replica whose answer came second logs no error. A command is
// still claimed, and run once.
func TestSuggestionsOverTheGatewayClaimNothing(t *testing.T) {
	for name, url := range map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres} {
		t.Run(name, func(t *testing.T) {
			var inboxes []*keys
			fake, envs, logged := replicas(t, url(t), 2, func(c *discord.Config) {
				k := &keys{Inbox: c.Inbox}
				inboxes = append(inboxes, k)
				c.Inbox = k
				c.Complete = func(_ context.Context, _, _, typed string) []discord.Choice {
					return []discord.Choice{{Name: typed + "7 (active)", Value: typed + "7"}}
				}
			})
			for range 3 {
				body := discordtest.Autocomplete(in(alice), "gpu", "status", discordtest.Opt{Name: "lease", Value: "L-", Focused: true})
				id := discordtest.ID(body)
				fake.Deliver(body)
				if !fake.WaitFor(func() bool { _, ok := fake.AnswerTo(id); return ok }) {
					t.Fatal("no suggestions")
				}
				for _, e := range envs {
					e.wait()
				}
				m, _ := fake.AnswerTo(id)
				if m.Type != 8 || len(m.Choices) != 1 || m.Choices[0].Value != "L-7" {
					t.Errorf("suggestions %+v, want L-7 alone", m)
				}
			}
			// Both replicas answered each keystroke, and Discord refused the second answer.
			fake.WaitFor(func() bool { return fake.AnsweredTwice() >= 3 })
			for _, e := range envs {
				e.wait()
			}
			if n := fake.AnsweredTwice(); n != 3 {
				t.Errorf("Discord refused %d answers to 3 keystrokes, want 3 (one per keystroke: the second replica's)", n)
			}
			for i, k := range inboxes {
				if got := k.asked(); len(got) != 0 {
					t.Errorf("replica %d kept %q in the inbox for keystrokes", i, got)
				}
			}
			if errs := logged.errors(); len(errs) != 0 {
				t.Errorf("logged errors: %q", errs)
			}
			body := discordtest.Command(in(alice), "gpu", "help")
			fake.Deliver(body)
			if !fake.WaitFor(func() bool { _, ok := fake.AnswerTo(discordtest.ID(body)); return ok }) {
				t.Fatal("no answer to a command")
			}
			// Both replicas have been told whether their claim was kept.
			if !fake.WaitFor(func() bool {
				for _, k := range inboxes {
					if !slices.Contains(k.asked(), "discord:gateway:"+discordtest.ID(body)) {
						return false
					}
				}
				return true
			}) {
				t.Fatal("a replica never claimed the command")
			}
			for _, e := range envs {
				e.wait()
			}
			if n := ran(envs); n != 1 {
				t.Errorf("a command ran %d times, want once", n)
			}
		})
	}
}

// A replica to which the gateway delivers an interaction late (it was slow, or its session
// resumed and Discord delivered again what it had missed), after another replica answered it,
// leaves it alone: the claim outlasts the answer. Once the claim has run out, Recover forgets it
// without running anything, and counts nothing.
func TestAnInteractionDeliveredLateToAnotherReplicaIsNotRunAgain(t *testing.T) {
	url := storetest.SQLite(t)
	fake, first, logged := replicas(t, url, 1, nil)
	body := discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 2})
	fake.Deliver(body)
	if !fake.WaitFor(func() bool { _, ok := fake.AnswerTo(discordtest.ID(body)); return ok }) {
		t.Fatal("no answer")
	}
	first[0].wait()
	// Another replica, on the same database, opens its gateway and is delivered the same
	// interaction.
	db := storetest.Open(t, url)
	late := newEnv(t, func(c *discord.Config) {
		c.PublicKey, c.APIURL = "", fake.URL
		c.Inbox, c.InboxClaim = chatstore.Inbox{DB: db, Owner: "late", Platform: discord.Platform}, 500*time.Millisecond
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- late.adapter.RunGateway(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if !fake.WaitFor(func() bool { return fake.Clients() == 2 }) {
		t.Fatal("the late replica never opened the gateway")
	}
	fake.Deliver(body)
	time.Sleep(300 * time.Millisecond)
	late.wait()
	if n := len(late.handler.requests()); n != 0 {
		t.Errorf("the late replica ran the command again")
	}
	if n := fake.AnsweredTwice(); n != 0 {
		t.Errorf("the late replica answered it again (%d refused)", n)
	}
	if errs := logged.errors(); len(errs) != 0 {
		t.Errorf("logged errors: %q", errs)
	}
	if _, err := db.ReleaseDeliveryClaims(t.Context(), discord.Platform, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if n, err := late.adapter.Recover(t.Context()); err != nil || n != 0 {
		t.Errorf("Recover took %d commands (%v); want none: a claim runs nothing", n, err)
	}
	late.wait()
	if n := ran(append(first, late)); n != 1 {
		t.Errorf("the command ran %d times, want once", n)
	}
	// Forgetting is written in the background.
	if !fake.WaitFor(func() bool {
		owners, err := db.DeliveryClaimers(t.Context(), discord.Platform, time.Now().Add(-24*time.Hour))
		return err == nil && len(owners) == 0
	}) {
		t.Error("claims are left after Recover")
	}
}

// The gateway's claims that ran out are forgotten by one Recover however many there are (more
// than the inbox gives at once), and counted as nothing taken.
func TestRecoverForgetsEveryClaimThatRanOut(t *testing.T) {
	db := storetest.Open(t, storetest.SQLite(t))
	var ds []store.Delivery
	for i := range 250 {
		ds = append(ds, store.Delivery{Key: fmt.Sprintf("discord:gateway:%d", 800000000000000000+i), Platform: discord.Platform,
			Payload: fmt.Sprintf(`{"id":"%d","claim":true}`, 800000000000000000+i), ReceivedAt: time.Now().Add(-time.Hour)})
	}
	if _, err := db.AcceptDeliveries(t.Context(), ds, "gone", time.Minute); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *discord.Config) { c.Inbox = chatstore.Inbox{DB: db, Owner: "live", Platform: discord.Platform} })
	if n, err := e.adapter.Recover(t.Context()); err != nil || n != 0 {
		t.Errorf("Recover took %d commands (%v); want none", n, err)
	}
	// Forgetting is written in the background; what is left is claimed by someone.
	if !e.fake.WaitFor(func() bool {
		owners, err := db.DeliveryClaimers(t.Context(), discord.Platform, time.Now().Add(-24*time.Hour))
		return err == nil && len(owners) == 0
	}) {
		t.Error("claims are left after Recover")
	}
	if reqs := e.handler.requests(); len(reqs) != 0 {
		t.Errorf("ran %+v", reqs)
	}
}
