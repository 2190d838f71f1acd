package discord_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/testkit"
)

// A command whose answer comes after Discord stopped taking answers to its interaction (its
// token works for 15 minutes; the edit of the deferral is refused, 401 Invalid Webhook Token)
// ran all the same: its answer reaches the person by DM, saying why it comes there, with its
// buttons, rather than being lost with "thinking…" left on screen.
func TestAnAnswerPastTheInteractionsTokenComesByDM(t *testing.T) {
	e := newEnv(t, func(c *discord.Config) {
		c.AnswerWithin = 10 * time.Millisecond
		c.OptionsOf = func(line string) (string, []discord.OptionValue, bool) {
			n, ok := strings.CutPrefix(line, "/gpu request ")
			return "request", []discord.OptionValue{{Name: "gpus", Value: n, Known: true}}, ok
		}
	})
	e.handler.delay = 300 * time.Millisecond
	e.handler.reply = func(req bot.Request) []bot.Reply {
		return []bot.Reply{{Text: "L-9 is active: 1 × interactive until 17:00.", Actions: []bot.Action{{Label: "Release", Command: "/gpu release L-9"}}}}
	}
	body := discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 1})
	e.fake.Expire(discordtest.ID(body))
	if r := e.send(body); r.Type != 5 {
		t.Fatalf("answer type %d, want a deferral (5)", r.Type)
	}
	e.wait()
	dms := e.fake.PostsTo(discordtest.DMChannel(alice))
	if len(dms) != 1 {
		t.Fatalf("%d DMs to alice, want the answer: %+v", len(dms), dms)
	}
	if !strings.Contains(dms[0].Text(), "L-9 is active") {
		t.Errorf("the DM says %q; want the answer", dms[0].Text())
	}
	if !strings.Contains(dms[0].Text(), "/gpu request gpus:1") {
		t.Errorf("the DM says %q; want it to name the command it answers, as typed", dms[0].Text())
	}
	if _, ok := dms[0].Button("Release"); !ok {
		t.Errorf("the DM has no Release button: %+v", dms[0].Buttons)
	}
}

// A late answer longer than one Discord message reaches the person by DM whole: every part, in
// order, each within Discord's limits, the first saying why it comes there and the buttons on
// the last, rather than the first part alone.
func TestALongAnswerPastTheInteractionsTokenComesByDMWhole(t *testing.T) {
	want, long := longReply()
	e := newEnv(t, func(c *discord.Config) { c.AnswerWithin = 10 * time.Millisecond })
	e.handler.delay = 100 * time.Millisecond
	e.handler.reply = func(bot.Request) []bot.Reply { return []bot.Reply{long} }
	body := discordtest.Command(in(alice), "gpu", "help")
	e.fake.Expire(discordtest.ID(body))
	if r := e.send(body); r.Type != 5 {
		t.Fatalf("answer type %d, want a deferral (5)", r.Type)
	}
	e.wait()
	dms := e.fake.PostsTo(discordtest.DMChannel(alice))
	if len(dms) < 2 {
		t.Fatalf("%d DMs to alice, want the answer in several parts", len(dms))
	}
	if !strings.Contains(dms[0].Text(), "stopped waiting") {
		t.Errorf("the first DM says %q; want it to say why the answer comes by DM", dms[0].Text()[:min(200, len(dms[0].Text()))])
	}
	for i, m := range dms {
		m.Ephemeral = true // a DM is the person's own; checkMessage asks for privacy
		checkMessage(t, fmt.Sprintf("DM %d of %d", i+1, len(dms)), m)
		if _, ok := m.Button("Request 1 train"); ok != (i == len(dms)-1) {
			t.Errorf("DM %d of %d: button %v", i+1, len(dms), ok)
		}
	}
	checkInOrder(t, dms, want)
}

// When the interaction's token stops working between a long answer's first part (given in place)
// and its follow-ups, the parts not yet given reach the person by DM, in order, rather than
// being lost.
func TestTheRestOfALongAnswerPastTheTokenComesByDM(t *testing.T) {
	want, long := longReply()
	e := newEnv(t, func(c *discord.Config) { c.AnswerWithin = 10 * time.Millisecond })
	e.handler.delay = 100 * time.Millisecond
	e.handler.reply = func(bot.Request) []bot.Reply { return []bot.Reply{long} }
	body := discordtest.Command(in(alice), "gpu", "help")
	id := discordtest.ID(body)
	e.fake.OnRequest(func(r *http.Request) {
		if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/webhooks/") {
			e.fake.Expire(id) // the follow-ups come 15 minutes too late
		}
	})
	if r := e.send(body); r.Type != 5 {
		t.Fatalf("answer type %d, want a deferral (5)", r.Type)
	}
	e.wait()
	first, ok := e.fake.AnswerTo(id)
	if !ok {
		t.Fatal("the deferral was never replaced")
	}
	dms := e.fake.PostsTo(discordtest.DMChannel(alice))
	if len(dms) == 0 {
		t.Fatal("no DM: the rest of the answer is lost")
	}
	if !strings.Contains(dms[0].Text(), "/gpu help") {
		t.Errorf("the first DM says %q; want it to name the command whose answer it goes on with", dms[0].Text()[:min(200, len(dms[0].Text()))])
	}
	checkInOrder(t, append([]discordtest.Message{first}, dms...), want)
	if _, ok := dms[len(dms)-1].Button("Request 1 train"); !ok {
		t.Errorf("the last DM has no button")
	}
}

// logged is one line of the adapter's log, as a test reads it.
type logged struct {
	Level string `json:"level"`
	Msg   string `json:"msg"`
}

// logTo sends the adapter's log, every level, to buf as JSON lines.
func logTo(buf *testkit.SyncBuffer) func(*discord.Config) {
	return func(c *discord.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
}

// lines reads the log's lines.
func lines(t *testing.T, buf *testkit.SyncBuffer) []logged {
	t.Helper()
	var out []logged
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		var x logged
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("a log line that is not JSON: %q", l)
		}
		out = append(out, x)
	}
	return out
}

// A long answer whose follow-ups Discord no longer takes (the token expired after its first
// part) and whose rest then reaches the person by DM is a failure recovered: the log warns, saying
// what happened and that the rest went by DM, and says nothing at Error level, which an operator
// would be paged for. When the DM is refused too, the answer is lost, and that is an error.
func TestTheRestOfALateAnswerGivenByDMIsAWarningNotAnError(t *testing.T) {
	for _, dmsBlocked := range []bool{false, true} {
		t.Run(fmt.Sprintf("DMs blocked %v", dmsBlocked), func(t *testing.T) {
			_, long := longReply()
			var buf testkit.SyncBuffer
			e := newEnv(t, func(c *discord.Config) { c.AnswerWithin = 10 * time.Millisecond }, logTo(&buf))
			e.handler.delay = 100 * time.Millisecond
			e.handler.reply = func(bot.Request) []bot.Reply { return []bot.Reply{long} }
			if dmsBlocked {
				e.fake.BlockDMs(alice)
			}
			body := discordtest.Command(in(alice), "gpu", "help")
			id := discordtest.ID(body)
			e.fake.OnRequest(func(r *http.Request) {
				if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/webhooks/") {
					e.fake.Expire(id)
				}
			})
			if r := e.send(body); r.Type != 5 {
				t.Fatalf("answer type %d, want a deferral (5)", r.Type)
			}
			e.wait()
			var errs, warns []string
			for _, l := range lines(t, &buf) {
				switch l.Level {
				case "ERROR":
					errs = append(errs, l.Msg)
				case "WARN":
					warns = append(warns, l.Msg)
				}
			}
			if dmsBlocked {
				if len(errs) == 0 {
					t.Errorf("the answer's rest was lost (no follow-up, no DM) and nothing was logged as an error; warnings: %q", warns)
				}
				return
			}
			if len(e.fake.PostsTo(discordtest.DMChannel(alice))) == 0 {
				t.Fatal("no DM: the rest of the answer is lost")
			}
			if len(errs) > 0 {
				t.Errorf("the rest of the answer went by DM, yet the log has errors: %q", errs)
			}
			said := strings.Join(warns, "\n")
			if !strings.Contains(said, "token") || !strings.Contains(said, "DM") {
				t.Errorf("the warnings %q do not say that the token stopped working and the rest went by DM", warns)
			}
		})
	}
}

// A late answer given whole by DM is a warning too, and not an error.
func TestALateAnswerGivenByDMIsAWarningNotAnError(t *testing.T) {
	var buf testkit.SyncBuffer
	e := newEnv(t, func(c *discord.Config) { c.AnswerWithin = 10 * time.Millisecond }, logTo(&buf))
	e.handler.delay = 100 * time.Millisecond
	body := discordtest.Command(in(alice), "gpu", "help")
	e.fake.Expire(discordtest.ID(body))
	if r := e.send(body); r.Type != 5 {
		t.Fatalf("answer type %d, want a deferral (5)", r.Type)
	}
	e.wait()
	if len(e.fake.PostsTo(discordtest.DMChannel(alice))) != 1 {
		t.Fatal("the answer did not come by DM")
	}
	for _, l := range lines(t, &buf) {
		if l.Level == "ERROR" {
			t.Errorf("the answer went by DM, yet the log has an error: %q", l.Msg)
		}
	}
}
