package discord_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// discordMarks finds Discord markdown that is not escaped: bold, italics, underline, strike-through,
// spoilers, and a heading, subtext or quote at the start of a line.
var discordMarks = regexp.MustCompile(`(^|[^\\])(\*|_|~~|\|\|)|(^|\n)(#|-#|>)`)

// unescaped is Discord's text as its reader sees it: escapes and word joiners gone.
func unescaped(s string) string {
	return regexp.MustCompile(`\\([[:punct:]])`).ReplaceAllString(strings.ReplaceAll(s, "\u2060", ""), "$1")
}

// Text a user typed (a reason) reaches Discord as typed: none of its markdown (bold, underline,
// spoilers, strike-through, masked links, headings) is shown as formatting, and it reads as it
// was typed — in the message, a section's title and text, and a field's value.
func TestUserTextShowsAsTypedInDiscord(t *testing.T) {
	e := newEnv(t)
	typed := []string{
		"# urgent **now** __please__ ||secret|| ~~not~~ *soon* [the docs](https://evil.example)",
		"> quoted _word_ and -# small",
		"-# small print",
	}
	for _, h := range typed {
		if err := e.adapter.Send(context.Background(), bot.Reply{To: "#vision-gpu", Text: h,
			Sections: []bot.Section{{Title: h, Text: h, Fields: []bot.Field{{Label: "Because", Value: h}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	e.wait()
	posts := e.fake.Posts()
	if len(posts) != len(typed) {
		t.Fatalf("%d posts, want %d", len(posts), len(typed))
	}
	for i, p := range posts {
		var texts []string
		for _, em := range p.Embeds {
			texts = append(texts, em.Title, em.Description)
			for _, f := range em.Fields {
				texts = append(texts, f.Value)
			}
		}
		shown := 0
		for _, s := range texts {
			if !strings.Contains(unescaped(s), typed[i]) {
				continue
			}
			shown++
			if m := discordMarks.FindString(s); m != "" {
				t.Errorf("Discord would format %q of what was typed in %q", m, s)
			}
		}
		if shown < 3 {
			t.Errorf("what was typed reads as typed in %d places, want the text, the section and the field: %q", shown, texts)
		}
	}
}

// A link in a message (the sign-in link, whose token may hold an _ or a - anywhere) reaches
// Discord as it is: Discord links a URL as written, so an escape in it would be part of the
// link and the link would lead nowhere.
func TestLinkReachesDiscordAsItIs(t *testing.T) {
	e := newEnv(t)
	links := []string{
		"https://sso.example/auth/login?t=_Tch-_x_",
		"http://127.0.0.1:8080/a/~b/c*d|e?t=a__b--c_",
	}
	for _, l := range links {
		if err := e.adapter.Send(context.Background(), bot.Reply{To: "#vision-gpu", Text: "Sign in with _the_ link: " + l + " — then come back here."}); err != nil {
			t.Fatal(err)
		}
	}
	e.wait()
	posts := e.fake.Posts()
	if len(posts) != len(links) {
		t.Fatalf("%d posts, want %d", len(posts), len(links))
	}
	for i, p := range posts {
		if !strings.Contains(p.Text(), " "+links[i]+" ") {
			t.Errorf("the link %s is not in the message as it is: %q", links[i], p.Text())
		}
		if strings.Contains(p.Text(), " _the_ ") {
			t.Errorf("the prose around the link is formatted: %q", p.Text())
		}
	}
}
