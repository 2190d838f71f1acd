package discord_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// longReply is a reply far longer than one Discord message (a large /gpu policy): numbered
// lines of text, then sections of text and a section with fields, and a button.
func longReply() ([]string, bot.Reply) {
	var want []string
	var text []string
	for i := range 60 {
		line := fmt.Sprintf("intro line %03d %s", i, strings.Repeat("i", 60))
		text = append(text, line)
		want = append(want, line)
	}
	r := bot.Reply{Text: strings.Join(text, "\n")}
	for s := range 4 {
		var lines []string
		for i := range 50 {
			line := fmt.Sprintf("class-%d-%03d: H100, 3.50 USD/GPU-hour %s", s, i, strings.Repeat("c", 40))
			lines = append(lines, line)
		}
		want = append(want, fmt.Sprintf("Section %d", s))
		want = append(want, lines...)
		r.Sections = append(r.Sections, bot.Section{Title: fmt.Sprintf("Section %d", s), Text: strings.Join(lines, "\n")})
	}
	var fields []bot.Field
	for i := range 12 {
		fields = append(fields, bot.Field{Label: fmt.Sprintf("field %02d", i), Value: fmt.Sprintf("value %02d %s", i, strings.Repeat("v", 300))})
		want = append(want, fmt.Sprintf("value %02d", i))
	}
	r.Sections = append(r.Sections, bot.Section{Title: "Fields", Fields: fields})
	r.Actions = []bot.Action{{Label: "Request 1 train", Command: "/gpu request 1 train"}}
	want = append(want, "the last line")
	r.Sections = append(r.Sections, bot.Section{Text: "the last line"})
	return want, r
}

// checkMessage fails when m breaks one of Discord's limits for a message.
func checkMessage(t *testing.T, what string, m discordtest.Message) {
	t.Helper()
	if len(m.Embeds) > discord.MaxEmbeds {
		t.Errorf("%s: %d embeds", what, len(m.Embeds))
	}
	total := 0
	for _, em := range m.Embeds {
		n := utf8.RuneCountInString
		if n(em.Description) > discord.MaxEmbedText || n(em.Title) > discord.MaxEmbedTitle || len(em.Fields) > discord.MaxEmbedFields {
			t.Errorf("%s: an embed over Discord's limits", what)
		}
		total += n(em.Title) + n(em.Description)
		for _, f := range em.Fields {
			total += n(f.Name) + n(f.Value)
			if n(f.Value) > discord.MaxFieldValue {
				t.Errorf("%s: a field of %d characters", what, n(f.Value))
			}
		}
		if em.Footer != nil {
			total += n(em.Footer.Text)
		}
	}
	if total > discord.MaxEmbedChars {
		t.Errorf("%s: %d characters in embeds", what, total)
	}
	if !m.Ephemeral {
		t.Errorf("%s is not private", what)
	}
	if strings.Contains(m.Text(), "did not fit") {
		t.Errorf("%s says something did not fit", what)
	}
}

// checkInOrder fails unless every one of want is in the messages, in order.
func checkInOrder(t *testing.T, ms []discordtest.Message, want []string) {
	t.Helper()
	var all strings.Builder
	for _, m := range ms {
		all.WriteString(m.Text() + "\n")
	}
	s := all.String()
	at := 0
	for _, w := range want {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("%q is missing from the answer, or out of order (%d messages): %q", w, len(ms), s[at:min(len(s), at+300)])
		}
		at += i + len(w)
	}
}

// TestLongAnswerGoesOnInFollowUps: an answer longer than one Discord message is not cut: the
// first part is the interaction's answer and the rest follow it as private follow-up messages,
// in order, each within Discord's limits, the buttons on the last.
func TestLongAnswerGoesOnInFollowUps(t *testing.T) {
	want, long := longReply()
	e := newEnv(t)
	e.handler.reply = func(bot.Request) []bot.Reply { return []bot.Reply{long} }
	body := discordtest.Command(in(alice), "gpu", "help")
	r := e.send(body)
	e.wait()
	first := discordtest.Message{Embeds: r.Data.Embeds, Ephemeral: r.Data.Flags&64 != 0, Buttons: r.buttons()}
	more := e.fake.FollowUps(discordtest.ID(body))
	if len(more) == 0 {
		t.Fatalf("no follow-up; the answer ends %q", first.Text()[max(0, len(first.Text())-200):])
	}
	all := append([]discordtest.Message{first}, more...)
	for i, m := range all {
		checkMessage(t, fmt.Sprintf("part %d of %d", i+1, len(all)), m)
		if _, ok := m.Button("Request 1 train"); ok != (i == len(all)-1) {
			t.Errorf("part %d of %d: button %v", i+1, len(all), ok)
		}
	}
	checkInOrder(t, all, want)
}

// TestLongDeferredAnswerGoesOnInFollowUps: the same for a slow command: its first part replaces
// "thinking…", the rest follow.
func TestLongDeferredAnswerGoesOnInFollowUps(t *testing.T) {
	want, long := longReply()
	e := newEnv(t, func(c *discord.Config) { c.AnswerWithin = time.Millisecond })
	e.handler.delay = 100 * time.Millisecond
	e.handler.reply = func(bot.Request) []bot.Reply { return []bot.Reply{long} }
	body := discordtest.Command(in(alice), "gpu", "help")
	if r := e.send(body); r.Type != 5 {
		t.Fatalf("answer type %d; want a deferral", r.Type)
	}
	e.wait()
	first, ok := e.fake.AnswerTo(discordtest.ID(body))
	if !ok {
		t.Fatal("the deferral was never replaced")
	}
	first.Ephemeral = true // the deferral was private, and its edit stays so
	more := e.fake.FollowUps(discordtest.ID(body))
	if len(more) == 0 {
		t.Fatalf("no follow-up; the answer ends %q", first.Text()[max(0, len(first.Text())-200):])
	}
	all := append([]discordtest.Message{first}, more...)
	for i, m := range all {
		checkMessage(t, fmt.Sprintf("part %d of %d", i+1, len(all)), m)
	}
	checkInOrder(t, all, want)
}

// TestTooManyLeasesSayHowManyAreLeftOut: a list of leases too long even for ten messages, each
// lease written as a paragraph, ends with a note of how many leases it leaves out and how to see
// one (as a Discord user types it, with the lease option), instead of how many messages it would
// have taken.
func TestTooManyLeasesSayHowManyAreLeftOut(t *testing.T) {
	r := bot.Reply{Text: "Your leases (1500):"}
	for i := 1; i <= 1500; i++ {
		r.Sections = append(r.Sections, bot.Section{Title: fmt.Sprintf("L-%d", i), Fields: []bot.Field{
			{Label: "State", Value: "active"}, {Label: "GPUs", Value: "1 × a-class-with-a-long-name-of-forty-chars"},
			{Label: "Team", Value: "a-team-with-a-long-name-of-forty-letters"}, {Label: "Time left", Value: "2d"}}})
	}
	e := newEnv(t)
	e.handler.reply = func(bot.Request) []bot.Reply { return []bot.Reply{r} }
	body := discordtest.Command(in(alice), "gpu", "help")
	resp := e.send(body)
	e.wait()
	first := discordtest.Message{Embeds: resp.Data.Embeds, Ephemeral: resp.Data.Flags&64 != 0}
	all := append([]discordtest.Message{first}, e.fake.FollowUps(discordtest.ID(body))...)
	if len(all) != discord.MaxParts {
		t.Fatalf("%d messages, want %d", len(all), discord.MaxParts)
	}
	shown := 0
	for i, m := range all {
		checkMessage(t, fmt.Sprintf("part %d", i+1), m)
		shown += strings.Count(m.Text(), "**L-")
	}
	if shown < 10*discord.MaxParts {
		t.Errorf("%d leases shown in %d messages; want them written several to an embed", shown, len(all))
	}
	last := all[len(all)-1].Embeds
	footer := last[len(last)-1].Footer
	want := fmt.Sprintf("Cut here: %d more not shown; /gpu status lease:LEASE shows one.", 1500-shown)
	if footer == nil || footer.Text != want {
		t.Errorf("the last message's footer is %+v, want %q", footer, want)
	}
}

// TestActionsPastTheButtonsAreCounted: 60 requests waiting, each with Approve and Deny, are more
// actions than a message's 25 buttons; those written out instead stop within their room and say
// how many more there are, rather than ending mid-command.
func TestActionsPastTheButtonsAreCounted(t *testing.T) {
	r := bot.Reply{Text: "60 request(s) wait for your decision."}
	for i := 201; i <= 260; i++ {
		id := fmt.Sprintf("L-%d", i)
		r.Sections = append(r.Sections, bot.Section{Title: id, Text: "asks for 9 GPUs"})
		r.Actions = append(r.Actions, bot.Action{Label: "Approve " + id, Command: "/gpu approve " + id, Style: "primary"},
			bot.Action{Label: "Deny " + id, Command: "/gpu deny " + id, Style: "danger"})
	}
	e := newEnv(t)
	e.handler.reply = func(bot.Request) []bot.Reply { return []bot.Reply{r} }
	body := discordtest.Command(in(alice), "gpu", "help")
	resp := e.send(body)
	e.wait()
	first := discordtest.Message{Embeds: resp.Data.Embeds, Ephemeral: resp.Data.Flags&64 != 0, Buttons: resp.buttons()}
	all := append([]discordtest.Message{first}, e.fake.FollowUps(discordtest.ID(body))...)
	last := all[len(all)-1]
	if len(last.Buttons) != 25 {
		t.Fatalf("%d buttons, want 25", len(last.Buttons))
	}
	text := last.Text()
	written := strings.Count(text, "`/gpu approve ") + strings.Count(text, "`/gpu deny ")
	if written == 0 {
		t.Fatalf("no action written out: %q", text)
	}
	want := fmt.Sprintf("and %d more", 120-25-written)
	if !strings.Contains(text, want) || strings.Contains(text, "…") {
		t.Errorf("the actions written out do not end %q: %q", want, text[max(0, len(text)-300):])
	}
}
