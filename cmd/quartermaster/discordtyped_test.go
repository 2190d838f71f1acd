package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestDiscordActionsBeyondTheButtonsAreWrittenAsTyped: a reply with more actions than Discord
// shows as buttons (/gpu approvals with 13 requests waiting: 26 actions, 25 buttons) writes the
// rest under the message as a Discord user types them, with the options named, as the examples
// beside refusals are.
func TestDiscordActionsBeyondTheButtonsAreWrittenAsTyped(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	for i := range 13 { // each its own length: the same request asked again while it waits is not asked again
		m := e.command(dAlice, "request", opt("gpus", 2), opt("class", "interactive"), opt("duration", fmt.Sprintf("%dm", 120+i)))
		if !strings.Contains(m.Text(), "waits for approval") {
			t.Fatalf("the request was answered %q", m.Text())
		}
	}
	// The list is longer than one message: the buttons are under its last part.
	body := discordtest.Command(discordtest.Who{User: dDana, Channel: dChannel, Guild: dGuild}, "gpu", "approvals")
	m := e.do(body)
	if more := e.fake.FollowUps(discordtest.ID(body)); len(more) > 0 {
		m = more[len(more)-1]
	}
	if len(m.Buttons) != 25 {
		t.Fatalf("%d buttons", len(m.Buttons))
	}
	if !strings.Contains(m.Text(), "Type it: Deny L-13: `/gpu deny lease:L-13`") {
		t.Errorf("the action beyond the buttons is written %q", m.Text()[strings.LastIndex(m.Text(), "Type it"):])
	}
}
