package main

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestDiscordShowsReasonsAsTyped: a reason someone typed that names a /gpu command (a denial's,
// a quota request's) reaches Discord as it was typed: the adapter writes the bot's own commands
// with Discord's options (/gpu approve lease:L-5), never the words of a reason.
func TestDiscordShowsReasonsAsTyped(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	id, _ := discordOverQuota(e)
	why := "release one first: /gpu release L-1, then /gpu request 1 interactive for 2h"
	e.command(dDana, "deny", opt("lease", id), opt("reason", why))
	if l := e.lease(id); l.State != qm.Denied {
		t.Fatalf("%s is %s", id, l.State)
	}
	var told string
	for _, m := range e.fake.PostsTo(discordtest.DMChannel(dAlice)) {
		if strings.Contains(m.Text(), id+" was denied") {
			told = m.Text()
		}
	}
	if !strings.Contains(told, why) {
		t.Errorf("the requester was told %q; want the reason as typed: %q", told, why)
	}

	reason := "the demo; ask me before /gpu approve L-9"
	m := e.command(dAlice, "quota-request", opt("gpus", 2), opt("class", "interactive"), opt("duration", "8h"), opt("reason", reason))
	qid := leaseIDIn(t, m.Text())
	if l := e.lease(qid); l.Kind != qm.KindQuota || l.State != qm.PendingApproval {
		t.Fatalf("the quota request was answered %q", m.Text())
	}
	toDana, _ := approvalPosts(e, qid)
	text := toDana.Text()
	if !strings.Contains(text, reason) {
		t.Errorf("the approval post does not show the reason as typed (%q): %q", reason, text)
	}
	// The bot's own commands in it are still written with Discord's options.
	if !strings.Contains(text, "/gpu approve lease:"+qid) {
		t.Errorf("the approval post does not name /gpu approve lease:%s: %q", qid, text)
	}
}
