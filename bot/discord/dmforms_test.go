package discord_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/store/chatstore"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// A command sent in a DM runs however it was written or pasted: with /GPU, gpu: or a mention of
// the app before it, indented, in a code block or span, in typographic quotes from a phone
// keyboard, or with a dash that looks like the hyphen between gpu and the command. What is inside
// the command (quotes, dashes) reaches the command as written, for it to read as /gpu does.
func TestADirectMessageRunsHoweverItIsWritten(t *testing.T) {
	e := gatewayEnv(t)
	cases := []struct{ typed, want string }{
		{"/GPU status L-7", "/gpu status L-7"},
		{"   \n  gpu status L-7", "/gpu status L-7"},
		{"gpu: status L-7", "/gpu status L-7"},
		{"GPU, Status L-7", "/gpu status L-7"},
		{"<@1> status L-7", "/gpu status L-7"}, // the app's user, as the gateway's READY names it
		{"<@!" + discordtest.App + ">: gpu status L-7", "/gpu status L-7"},
		{"```/gpu request 1 interactive for 4h```", "/gpu request 1 interactive for 4h"},
		{"```\n/gpu request 1 interactive\nfor 4h\n```", "/gpu request 1 interactive for 4h"},
		{"```text\ngpu status L-7\n```", "/gpu status L-7"},
		{"`status L-7`", "/gpu status L-7"},
		{"“request 1 interactive for 4h”", "/gpu request 1 interactive for 4h"},
		{"‘Status L-7’", "/gpu status L-7"},
		{"“`/gpu status L-7`”", "/gpu status L-7"},
		{"gpu — status L-7", "/gpu status L-7"},
		{"\u200bgpu status L-7", "/gpu status L-7"},
		{"“deny lease:L-3 reason:use the “train” class”", "/gpu deny L-3 use the “train” class"},
		{"status L–7", "/gpu status L–7"},
	}
	for _, c := range cases {
		got := e.dmAnswers(discordtest.DM{User: alice, Content: c.typed}, 1)
		if len(got) != 1 || !strings.Contains(got[0].Text(), "You asked: "+c.want) {
			t.Errorf("%q: answered %+v, want the answer to %q", c.typed, got, c.want)
		}
	}
	if reqs := e.handler.requests(); len(reqs) != len(cases) {
		t.Errorf("ran %d commands, want %d", len(reqs), len(cases))
	}
}

// A mention of someone else before a command is no command: they are not asking.
func TestADirectMessageNamingSomeoneElseIsNoCommand(t *testing.T) {
	e := gatewayEnv(t)
	got := e.dmAnswers(discordtest.DM{User: alice, Content: "<@" + bob + "> status L-7"}, 1)
	if len(got) != 1 || !strings.Contains(got[0].Text(), "here too without the slash") {
		t.Errorf("answered %+v; want how to ask", got)
	}
	if reqs := e.handler.requests(); len(reqs) != 0 {
		t.Errorf("ran %+v", reqs)
	}
}

// A very long DM that is no command is answered with one sentence saying how to ask, which does
// not repeat it.
func TestAVeryLongDirectMessageIsAnsweredInOneSentence(t *testing.T) {
	e := gatewayEnv(t)
	got := e.dmAnswers(discordtest.DM{User: bob, Content: strings.Repeat("so about those GPUs ", 200)}, 1)
	if len(got) != 1 || !strings.Contains(got[0].Text(), "here too without the slash") || strings.Contains(got[0].Text(), "those GPUs") || len(got[0].Text()) > 300 {
		t.Errorf("answered %+v; want how to ask", got)
	}
	if reqs := e.handler.requests(); len(reqs) != 0 {
		t.Errorf("ran %+v", reqs)
	}
}

// A DM command that a stop left unanswered until too late to run is named, in the DM that says
// so, as the command it was read as, not as it was pasted (a code block's backticks would show
// as quotes).
func TestADirectMessageTooOldToRunIsNamedAsTheCommand(t *testing.T) {
	db := storetest.Open(t, storetest.SQLite(t))
	inbox := chatstore.Inbox{DB: db, Owner: "test", Platform: discord.Platform}
	stuck := stalled{got: make(chan string, 1)}
	gone := newEnv(t, func(c *discord.Config) { c.PublicKey, c.Handler, c.Inbox, c.InboxClaim = "", stuck, inbox, time.Hour })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gone.adapter.RunGateway(ctx) }()
	gone.fake.DeliverMessage(discordtest.DM{User: alice, Content: "```\nGPU: request 2\n```"})
	<-stuck.got
	cancel()
	<-done
	stop(t, gone.adapter)
	if _, err := db.ReleaseDeliveryClaims(t.Context(), discord.Platform, []string{"test"}); err != nil {
		t.Fatal(err)
	}
	late := newEnv(t, func(c *discord.Config) {
		c.APIURL, c.Inbox, c.InboxClaim, c.ReplayWithin = gone.fake.URL, inbox, time.Hour, time.Nanosecond
	})
	if n, err := late.adapter.Recover(t.Context()); err != nil || n != 1 {
		t.Fatalf("recovered %d commands (%v), want the DM's", n, err)
	}
	late.wait()
	if reqs := late.handler.requests(); len(reqs) != 0 {
		t.Fatalf("ran %+v", reqs)
	}
	got := gone.fake.PostsTo(discordtest.DMChannel(alice))
	if len(got) != 1 || !strings.Contains(got[0].Text(), "too late to run it now") || !strings.Contains(got[0].Text(), "`/gpu request 2`") {
		t.Errorf("DMs %+v; want the command /gpu request 2 said to be too late to run", got)
	}
}
