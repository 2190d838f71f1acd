package slack_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// databases are the stores a test runs on, each in its own subtest.
var databases = []struct {
	name string
	url  func(testing.TB) string
}{{"SQLite", storetest.SQLite}, {"PostgreSQL", storetest.Postgres}}

// buttonLabelled finds the button of m whose label starts with label.
func buttonLabelled(t *testing.T, m message, label string) button {
	t.Helper()
	for _, b := range buttonsIn(m.Blocks) {
		if strings.HasPrefix(b.Label, label) {
			return b
		}
	}
	t.Fatalf("no button %q in %q: %+v", label, m.Text, buttonsIn(m.Blocks))
	return button{}
}

// press clicks button b of message m as user, under a trigger of its own (every click has one),
// and returns the answer to it.
func (e *env) press(user string, m message, b button) message {
	e.t.Helper()
	trigger := e.newTrigger()
	if code, _ := e.interaction(e.clickPayload(user, trigger, m, b)); code != http.StatusOK {
		e.t.Fatalf("click %s: HTTP %d", b.Value, code)
	}
	e.wait()
	return e.responseTo(trigger)
}

// ask types "/gpu TEXT" as user and returns the answer, once everything it set off is done.
func (e *env) ask(user, text string) message {
	e.t.Helper()
	trigger := e.command(user, text)
	e.wait()
	return e.responseTo(trigger)
}

// A button that requests a lease makes one lease per message: pressing it again (a double
// click, a press a minute later, one after a restart) makes no second lease, and the answer names
// the lease the first press made. So for Request 1 CLASS of /gpu catalog, Request it of /gpu
// estimate and Request again of an expiry notice.
func TestPressingARequestButtonTwiceMakesOneLease(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			e := newEnv(t, db.url(t))
			clock := e.svc.Clock.(*sim.Clock)
			e.command("UALICE", "request 1 interactive for 1h")
			e.wait()
			clock.Advance(61 * time.Minute)
			if err := e.svc.Tick(context.Background()); err != nil {
				t.Fatal(err)
			}
			e.wait()
			var expired message
			for _, m := range e.postsTo(dm("UALICE")) {
				if strings.Contains(m.Text, "expired") {
					expired = m
				}
			}
			if expired.TS == "" {
				t.Fatalf("no expiry notice: %+v", e.postsTo(dm("UALICE")))
			}
			buttons := []struct {
				msg   message
				label string
			}{
				{expired, "Request again"},
				{e.ask("UALICE", "catalog"), "Request 1 "},
				{e.ask("UALICE", "estimate 1 interactive for 2h"), "Request it"},
			}
			for _, bt := range buttons {
				b := buttonLabelled(t, bt.msg, bt.label)
				before := len(e.leases())
				// A double click: the second press arrives while the first is being answered.
				triggers := []string{e.newTrigger(), e.newTrigger()}
				for _, tr := range triggers {
					if code, _ := e.interaction(e.clickPayload("UALICE", tr, bt.msg, b)); code != http.StatusOK {
						t.Fatalf("click %s: HTTP %d", b.Value, code)
					}
				}
				e.wait()
				ls := e.leases()
				if len(ls) != before+1 {
					t.Fatalf("%s double-clicked made %d leases, want 1", bt.label, len(ls)-before)
				}
				id := ls[len(ls)-1].ID.String()
				want := id + " was already requested from this button; /gpu status " + id
				if x, y := e.responseTo(triggers[0]).Text, e.responseTo(triggers[1]).Text; strings.Contains(x, want) == strings.Contains(y, want) {
					t.Errorf("the two presses of %s were answered %q and %q; want one of them %q", bt.label, x, y, want)
				}
				clock.Advance(time.Minute)
				again := e.press("UALICE", bt.msg, b)
				if n := len(e.leases()); n != before+1 {
					t.Errorf("%s pressed again a minute later made %d leases in all, want 1", bt.label, n-before)
				}
				if !strings.Contains(again.Text, want) {
					t.Errorf("the press of %s a minute later was answered %q; want %q", bt.label, again.Text, want)
				}
				clock.Advance(time.Minute)
				e.restartProcess()
				later := e.press("UALICE", bt.msg, b)
				if n := len(e.leases()); n != before+1 {
					t.Errorf("%s pressed again after a restart made %d leases in all, want 1", bt.label, n-before)
				}
				if !strings.Contains(later.Text, want) {
					t.Errorf("the press of %s after a restart was answered %q; want %q", bt.label, later.Text, want)
				}
			}
		})
	}
}

// Extend 1h extends once per message: pressed twice, or again after a restart, it extends by one
// hour; the Extend button of a newer message (/gpu status) extends again.
func TestPressingExtendTwiceExtendsOnce(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			e := newEnv(t, db.url(t))
			granted := e.ask("UALICE", "request 1 interactive for 2h")
			id := e.leases()[0].ID.String()
			b := buttonLabelled(t, granted, "Extend 1h")
			e.press("UALICE", granted, b)
			if d := e.lease(id).Duration; d != 3*time.Hour {
				t.Fatalf("%s lasts %s after Extend 1h; want 3h", id, d)
			}
			again := e.press("UALICE", granted, b)
			if d := e.lease(id).Duration; d != 3*time.Hour {
				t.Errorf("%s lasts %s after Extend 1h pressed twice; want 3h", id, d)
			}
			if !strings.Contains(again.Text, id+" was already extended from this button") {
				t.Errorf("the second press of Extend 1h was answered %q", again.Text)
			}
			e.restartProcess()
			e.press("UALICE", granted, b)
			if d := e.lease(id).Duration; d != 3*time.Hour {
				t.Errorf("%s lasts %s after Extend 1h pressed again after a restart; want 3h", id, d)
			}
			status := e.ask("UALICE", "status "+id)
			e.press("UALICE", status, buttonLabelled(t, status, "Extend 1h"))
			if d := e.lease(id).Duration; d != 4*time.Hour {
				t.Errorf("%s lasts %s after the Extend 1h of a newer message; want 4h", id, d)
			}
		})
	}
}

// A press acknowledged by a process that stopped before running it is run by the next one as
// that button's press: pressing the button again then makes no second lease.
func TestARecoveredPressIsStillThatButtons(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	catalog := e.ask("UALICE", "catalog")
	b := buttonLabelled(t, catalog, "Request 1 ")
	live := e.current()
	stuck := stalled{got: make(chan string, 1)}
	gone := e.newAdapterWith(stuck, time.Hour, 0)
	e.handler.Store(gone)
	if code, _ := e.interaction(e.clickPayload("UALICE", e.newTrigger(), catalog, b)); code != http.StatusOK {
		t.Fatalf("click: HTTP %d", code)
	}
	<-stuck.got
	e.handler.Store(live)
	closeNow(t, gone)
	if _, err := e.db.ReleaseDeliveryClaims(t.Context(), "slack", []string{"test"}); err != nil {
		t.Fatal(err)
	}
	if n, err := live.Recover(t.Context()); err != nil || n != 1 {
		t.Fatalf("recovered %d commands, want the press (%v)", n, err)
	}
	e.wait()
	ls := e.leases()
	if len(ls) != 1 {
		t.Fatalf("the recovered press made %d leases, want 1", len(ls))
	}
	id := ls[0].ID.String()
	if again := e.press("UALICE", catalog, b); !strings.Contains(again.Text, id+" was already requested from this button") {
		t.Errorf("the press after the recovered one was answered %q", again.Text)
	}
	if n := len(e.leases()); n != 1 {
		t.Errorf("%d leases after pressing the button again, want 1", n)
	}
}
