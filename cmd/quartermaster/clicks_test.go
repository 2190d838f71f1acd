package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// databases are the stores a test runs on, each in its own subtest.
var databases = []struct {
	name string
	url  func(testing.TB) string
}{{"SQLite", storetest.SQLite}, {"PostgreSQL", storetest.Postgres}}

// buttonLabelled finds the button of m whose label starts with label.
func buttonLabelled(t *testing.T, m discordtest.Message, label string) discordtest.Button {
	t.Helper()
	for _, b := range m.Buttons {
		if strings.HasPrefix(b.Label, label) {
			return b
		}
	}
	t.Fatalf("no button %q in %q: %+v", label, m.Text(), m.Buttons)
	return discordtest.Button{}
}

// pressTogether presses button b of message m as user several times at once, each press an
// interaction of its own (a double click), and returns the answers.
func (e *discordEnv) pressTogether(user string, m discordtest.Message, b discordtest.Button, n int) []discordtest.Message {
	e.t.Helper()
	bodies := make([][]byte, n)
	acks := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range bodies {
		bodies[i] = discordtest.Click(discordtest.Who{User: user, Channel: m.ChannelID, Guild: dGuild}, m, b.CustomID)
		wg.Add(1)
		go func() {
			defer wg.Done()
			acks[i], errs[i] = e.post(bodies[i])
		}()
	}
	wg.Wait()
	e.wait()
	out := make([]discordtest.Message, n)
	for i := range bodies {
		if errs[i] != nil {
			e.t.Fatal(errs[i])
		}
		out[i] = e.answer(bodies[i], acks[i])
	}
	return out
}

// On Discord, a button that requests a lease makes one lease per message: pressing it again (a
// double click, a press a minute later, one after a restart) makes no second lease, and the
// answer names the lease the first press made. So for Request 1 CLASS of /gpu catalog, Request
// it of /gpu estimate and Request again of an expiry notice.
func TestDiscordPressingARequestButtonTwiceMakesOneLease(t *testing.T) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			e := newDiscordEnv(t, db.url(t))
			e.command(dAlice, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "1h"))
			if err := e.app.Advance(context.Background(), 61*time.Minute); err != nil {
				t.Fatal(err)
			}
			e.wait()
			var expired discordtest.Message
			for _, m := range e.fake.PostsTo(discordtest.DMChannel(dAlice)) {
				if strings.Contains(m.Text(), "expired") {
					expired = m
				}
			}
			if expired.ID == "" {
				t.Fatalf("no expiry notice: %+v", e.fake.PostsTo(discordtest.DMChannel(dAlice)))
			}
			buttons := []struct {
				msg   discordtest.Message
				label string
			}{
				{expired, "Request again"},
				{e.command(dAlice, "catalog"), "Request 1 "},
				{e.command(dAlice, "estimate", opt("gpus", 1), opt("class", "interactive"), opt("duration", "2h")), "Request it"},
			}
			for _, bt := range buttons {
				b := buttonLabelled(t, bt.msg, bt.label)
				before := len(e.leases())
				both := e.pressTogether(dAlice, bt.msg, b, 2)
				ls := e.leases()
				if len(ls) != before+1 {
					t.Fatalf("%s double-clicked made %d leases, want 1", bt.label, len(ls)-before)
				}
				id := ls[len(ls)-1].ID.String()
				want := id + " was already requested from this button; /gpu status lease:" + id // as Discord takes it
				if x, y := both[0].Text(), both[1].Text(); strings.Contains(x, want) == strings.Contains(y, want) {
					t.Errorf("the two presses of %s were answered %q and %q; want one of them %q", bt.label, x, y, want)
				}
				e.app.SimClk.Advance(time.Minute)
				if again := e.click(dAlice, bt.msg, b.Label); !strings.Contains(again.Text(), want) {
					t.Errorf("the press of %s a minute later was answered %q; want %q", bt.label, again.Text(), want)
				}
				e.restartProcess()
				if later := e.click(dAlice, bt.msg, b.Label); !strings.Contains(later.Text(), want) {
					t.Errorf("the press of %s after a restart was answered %q; want %q", bt.label, later.Text(), want)
				}
				if n := len(e.leases()); n != before+1 {
					t.Errorf("%s pressed four times made %d leases, want 1", bt.label, n-before)
				}
			}
		})
	}
}

// On Discord, Extend 1h extends once per message: pressed twice, or again after a restart, it
// extends by one hour; the Extend button of a newer message (/gpu status) extends again.
func TestDiscordPressingExtendTwiceExtendsOnce(t *testing.T) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			e := newDiscordEnv(t, db.url(t))
			granted := e.command(dAlice, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "2h"))
			id := leaseIDIn(t, granted.Text())
			e.click(dAlice, granted, "Extend 1h")
			if d := e.lease(id).Duration; d != 3*time.Hour {
				t.Fatalf("%s lasts %s after Extend 1h; want 3h", id, d)
			}
			again := e.click(dAlice, granted, "Extend 1h")
			if d := e.lease(id).Duration; d != 3*time.Hour {
				t.Errorf("%s lasts %s after Extend 1h pressed twice; want 3h", id, d)
			}
			if !strings.Contains(again.Text(), id+" was already extended from this button") {
				t.Errorf("the second press of Extend 1h was answered %q", again.Text())
			}
			e.restartProcess()
			e.click(dAlice, granted, "Extend 1h")
			if d := e.lease(id).Duration; d != 3*time.Hour {
				t.Errorf("%s lasts %s after Extend 1h pressed again after a restart; want 3h", id, d)
			}
			status := e.command(dAlice, "status", opt("lease", id))
			e.click(dAlice, status, "Extend 1h")
			if d := e.lease(id).Duration; d != 4*time.Hour {
				t.Errorf("%s lasts %s after the Extend 1h of a newer message; want 4h", id, d)
			}
		})
	}
}
