package slack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
)

// updateOf waits briefly for the last chat.update of message m, and returns it.
func (e *env) updateOf(m message) (message, bool) {
	e.t.Helper()
	for range 100 {
		e.wait()
		_, updates, _, _ := e.slack.snapshot()
		for i := len(updates) - 1; i >= 0; i-- {
			if updates[i].Channel == m.Channel && updates[i].TS == m.TS {
				return updates[i], true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return message{}, false
}

// Keep and Release pressed on an idle warning edit that warning in the DM: it says what was done
// and loses its buttons, so it offers Keep and Release no more.
func TestAnAnsweredIdleWarningIsEditedInSlack(t *testing.T) {
	e := newAndesEnv(t)
	e.bot.Edits = bot.SenderFunc(func(ctx context.Context, r bot.Reply) error { return e.current().Send(ctx, r) })
	e.ask("USOFIA", "request 1 lab for 3h")
	l := e.leases()[0]
	id := l.ID.String()
	cls, _ := e.svc.Policy.Class("lab")

	for i, press := range []struct{ button, want string }{
		{"/gpu keep " + id, id + " was kept at"},
		{"/gpu release " + id, id + " was released at"},
	} {
		e.idleFor(l, cls.IdleTimeout.Duration+time.Minute)
		warnings := e.idleWarnings("USOFIA", id)
		if len(warnings) != i+1 {
			t.Fatalf("idle warnings of %s: %d, want %d", id, len(warnings), i+1)
		}
		w := warnings[i]
		e.press("USOFIA", w, findButton(t, w.Blocks, press.button))
		got, ok := e.updateOf(w)
		if !ok {
			t.Fatalf("%s: the idle warning was not edited", press.button)
		}
		if !strings.Contains(got.Text, press.want) || len(buttonsIn(got.Blocks)) != 0 {
			t.Errorf("%s: the idle warning now reads %q with buttons %v; want %q without buttons", press.button, got.Text, buttonsIn(got.Blocks), press.want)
		}
	}
}

// A request of team volcan, whose budget owner is the group volcan-leads, tells its requester
// who in that group will decide, not the group's name alone.
func TestAGroupOfBudgetOwnersIsNamedWithItsMembersInSlack(t *testing.T) {
	e := newAndesEnv(t)
	got := e.ask("USOFIA", "request 2 lab for 1h")
	if !strings.Contains(got.Text, "volcan-leads (diego@andes.example) will decide") {
		t.Errorf("sofia's request that waits for volcan-leads answered %q", got.Text)
	}
}
