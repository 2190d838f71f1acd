package slack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
)

// An idle warning answered with Keep keeps saying it was kept when a later warning of the same
// lease goes unanswered and the lease is reclaimed: that later warning says it was reclaimed, and
// the earlier one adds that it was, later.
func TestAnEarlierIdleWarningKeepsWhatBecameOfIt(t *testing.T) {
	e := newAndesEnv(t)
	e.bot.Edits = bot.SenderFunc(func(ctx context.Context, r bot.Reply) error { return e.current().Send(ctx, r) })
	e.ask("UJUAN", "request 1 lab for 6h")
	l := e.leases()[0]
	id := l.ID.String()
	cls, _ := e.svc.Policy.Class("lab")

	e.idleFor(l, cls.IdleTimeout.Duration+time.Minute)
	first := e.idleWarnings("UJUAN", id)
	if len(first) != 1 {
		t.Fatalf("idle warnings after %s idle: %d", cls.IdleTimeout, len(first))
	}
	e.press("UJUAN", first[0], findButton(t, first[0].Blocks, "/gpu keep "+id))
	kept, ok := e.updateOf(first[0])
	if !ok || !strings.Contains(kept.Text, id+" was kept at") {
		t.Fatalf("the kept warning reads %q", kept.Text)
	}

	e.idleFor(l, cls.IdleTimeout.Duration+time.Minute)
	warnings := e.idleWarnings("UJUAN", id)
	if len(warnings) != 2 {
		t.Fatalf("idle warnings after a second idle period: %d, want 2", len(warnings))
	}
	e.idleFor(l, cls.IdleGrace.Duration+time.Minute) // no answer: reclaimed
	if s := e.lease(id).State; s.Running() {
		t.Fatalf("the lease is %s after the grace of its second warning", s)
	}
	if got, ok := e.updateOf(warnings[1]); !ok || !strings.Contains(got.Text, id+" was reclaimed at") || len(buttonsIn(got.Blocks)) != 0 {
		t.Errorf("the unanswered warning now reads %q with buttons %v; want it reclaimed, without buttons", got.Text, buttonsIn(got.Blocks))
	}
	if got, _ := e.updateOf(first[0]); !strings.Contains(got.Text, id+" was kept at") || !strings.Contains(got.Text, "Later, "+id+" was reclaimed at") ||
		len(buttonsIn(got.Blocks)) != 0 {
		t.Errorf("the warning answered with Keep now reads %q with buttons %v; want it still to say it was kept, then that it was reclaimed later", got.Text, buttonsIn(got.Blocks))
	}
}
