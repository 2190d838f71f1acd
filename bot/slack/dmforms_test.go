package slack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// A command sent in the Messages tab runs however it was written or pasted: with /GPU, gpu: or
// a mention of the app before it, indented, in a code block or span, in typographic quotes from a
// phone keyboard, or with a dash that looks like the hyphen in the command's name.
func TestADirectMessageRunsHoweverItIsWrittenInSlack(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	e.im("UALICE", "```/gpu request 1 interactive for 1h```", false)
	ls := e.leases()
	if len(ls) != 1 || ls[0].User != "alice@acme.example" {
		t.Fatalf("leases %+v; want alice's, from the command in a code block; answers %+v", ls, e.postsTo(dm("UALICE")))
	}
	id := ls[0].ID.String()
	for _, sent := range []string{
		"/GPU list",
		"   \n  gpu list",
		"gpu: list",
		"GPU, List",
		"<@" + appUser + "> list",
		"<@" + appUser + ">: gpu list",
		"```\n/gpu list\n```",
		"```text\ngpu list\n```",
		"`list`",
		"“gpu list”",
		"‘List’",
		"“`/gpu list`”",
		"gpu — list",
		"\u200bgpu list",
	} {
		before := len(e.postsTo(dm("UALICE")))
		e.imSent("UALICE", sent, false)
		posts := e.postsTo(dm("UALICE"))
		if len(posts) != before+1 || !strings.Contains(posts[before].Text, id) {
			t.Errorf("%q: the DM holds %+v; want the list with %s", sent, posts[before:], id)
		}
	}
	if ls := e.leases(); len(ls) != 1 {
		t.Errorf("%d leases, want the one", len(ls))
	}
	// Quotes and dashes inside the command are the command's to read, as in /gpu: a lease id
	// written with an en dash is refused with the id written with the hyphen, which runs.
	before := len(e.postsTo(dm("UALICE")))
	e.im("UALICE", "“status "+strings.Replace(id, "-", "–", 1)+"”", false)
	posts := e.postsTo(dm("UALICE"))
	if len(posts) != before+1 || !strings.Contains(posts[before].Text, "hyphen") || !strings.Contains(posts[before].Text, "/gpu status "+id) {
		t.Errorf("the lease id with an en dash was answered %+v; want the refusal naming /gpu status %s", posts[before:], id)
	}
}

// A mention of someone else before a command is no command: they are not asking.
func TestADirectMessageNamingSomeoneElseIsNoCommandInSlack(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	e.imSent("UALICE", "<@UBOB> request 1 interactive for 1h", false)
	if ls := e.leases(); len(ls) != 0 {
		t.Errorf("made %+v", ls)
	}
	posts := e.postsTo(dm("UALICE"))
	if len(posts) != 1 || !strings.Contains(posts[0].Text, "here too without the slash") {
		t.Errorf("answered %+v; want how to ask", posts)
	}
}

// A very long message is answered with one sentence: one that is no command with how to ask
// (without repeating it), one that is a command too long to read with how long it may be; nothing
// is made.
func TestAVeryLongDirectMessageIsAnsweredInOneSentenceInSlack(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	chat := strings.Repeat("so about those GPUs ", 2000)
	e.im("UBOB", chat, false)
	command := "request 1 interactive for 1h reason " + strings.Repeat("deadline ", 2000)
	e.im("UBOB", "```"+command+"```", false)
	posts := e.postsTo(dm("UBOB"))
	if len(posts) != 2 {
		t.Fatalf("%d answers, want two: %+v", len(posts), posts)
	}
	if !strings.Contains(posts[0].Text, "here too without the slash") || strings.Contains(posts[0].Text, "those GPUs") || len(posts[0].Text) > 300 {
		t.Errorf("the long chat was answered %q; want how to ask", posts[0].Text)
	}
	if !strings.Contains(posts[1].Text, "characters long") || strings.Contains(posts[1].Text, "deadline deadline") || len(posts[1].Text) > 300 {
		t.Errorf("the long command was answered %q; want how long a command may be", posts[1].Text)
	}
	if ls := e.leases(); len(ls) != 0 {
		t.Errorf("made %+v", ls)
	}
}

// A very long command sent in the Messages tab that a stop left unrun until too late is named in
// the DM that says so by its beginning, not repeated whole.
func TestAVeryLongDirectMessageTooOldToRunIsNamedShortInSlack(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	stuck := stalled{got: make(chan string, 1)}
	gone := e.newAdapterWith(stuck, time.Hour, 0)
	e.handler.Store(gone)
	e.deliverIM("UALICE", "“request 1 interactive for 1h reason "+strings.Repeat("deadline ", 3000)+"”", false)
	<-stuck.got
	closeNow(t, gone)
	if _, err := e.db.ReleaseDeliveryClaims(t.Context(), "slack", []string{"test"}); err != nil {
		t.Fatal(err)
	}
	tooLate := e.newAdapterWith(e.bot, time.Hour, time.Nanosecond)
	e.handler.Store(tooLate)
	defer closeNow(t, tooLate)
	if n, err := tooLate.Recover(t.Context()); err != nil || n != 1 {
		t.Fatalf("recovered %d commands, want the DM's (%v)", n, err)
	}
	waitFor(t, tooLate)
	posts := e.postsTo(dm("UALICE"))
	if len(posts) != 1 || !strings.Contains(posts[0].Text, "too late to run it now") || !strings.Contains(posts[0].Text, "/gpu request 1 interactive for 1h reason deadline") || len(posts[0].Text) > 500 {
		t.Errorf("DMs %+v; want the command named by its beginning, too late to run", posts)
	}
	if ls := e.leases(); len(ls) != 0 {
		t.Errorf("made %+v", ls)
	}
}

// On another policy, the example a message that is no command is answered with runs when sent
// back as a phone or a paste writes it: in typographic quotes, in a code block after gpu:, its
// class in typographic quotes.
func TestTheExamplePastedBackWorksOnAnotherPolicy(t *testing.T) {
	for _, wrap := range []func(string) string{
		func(ex string) string { return "“" + ex + "”" },
		func(ex string) string { return "```\nGPU: " + ex + "\n```" },
		func(ex string) string {
			f := strings.Fields(ex) // request N CLASS for D
			f[2] = "‘" + f[2] + "’"
			return "<@" + appUser + "> " + strings.Join(f, " ")
		},
	} {
		e := newAndesEnv(t)
		e.im("UJUAN", "hola", false)
		posts := e.postsTo(dm("UJUAN"))
		_, example, _ := strings.Cut(posts[0].Text, "`")
		example, _, found := strings.Cut(example, "`")
		if !found || !strings.HasPrefix(example, "request ") {
			t.Fatalf("no request example in %q", posts[0].Text)
		}
		e.imSent("UJUAN", wrap(example), false)
		if ls := e.leases(); len(ls) != 1 || ls[0].User != "juan_perez@andes.example" {
			t.Errorf("%q made %+v; want juan's lease; answers %+v", wrap(example), ls, e.postsTo(dm("UJUAN")))
		}
	}
}

// Where an event does not name the app's bot user, a mention of it before a command is known
// from what auth.test said at start.
func TestAMentionOfTheAppIsKnownFromTheTokenInSlack(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	e.unauthorized = true
	e.im("UALICE", "request 1 interactive for 1h", false)
	ls := e.leases()
	if len(ls) != 1 {
		t.Fatalf("leases %+v", ls)
	}
	in, err := e.adapter.CheckToken(t.Context())
	if err != nil || in.BotUserID == "" {
		t.Fatalf("auth.test: %+v, %v", in, err)
	}
	before := len(e.postsTo(dm("UALICE")))
	e.imSent("UALICE", "<@"+in.BotUserID+"> list", false)
	posts := e.postsTo(dm("UALICE"))
	if len(posts) != before+1 || !strings.Contains(posts[before].Text, ls[0].ID.String()) {
		t.Errorf("the DM holds %+v; want the list with %s", posts[before:], ls[0].ID.String())
	}
}
