package discord_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
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
