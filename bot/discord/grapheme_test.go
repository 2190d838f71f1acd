package discord_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/testkit"
)

// A text longer than an embed with no space or line break to cut at is cut between two
// characters as they are shown, never inside one: no half of an emoji, flag or accented letter
// ends one piece and begins the next, and no piece is longer than Discord takes.
func TestAHardCutFallsBetweenCharactersAsShown(t *testing.T) {
	for name, c := range testkit.ShownCharacters {
		for _, lead := range []string{"", "x", "xy", "xyz"} {
			t.Run(fmt.Sprintf("%s after %q", name, lead), func(t *testing.T) {
				n := 2*discord.MaxEmbedText/utf8.RuneCountInString(c) + 7
				e := newEnv(t)
				e.handler.reply = func(bot.Request) []bot.Reply {
					return []bot.Reply{{Text: lead + strings.Repeat(c, n)}}
				}
				body := discordtest.Command(in(alice), "gpu", "help")
				r := e.send(body)
				e.wait()
				pieces := piecesOf(e, body, r)
				if len(pieces) < 2 {
					t.Fatalf("the text is in %d pieces; want it cut", len(pieces))
				}
				total := 0
				for i, p := range pieces {
					if l := utf8.RuneCountInString(p); l > discord.MaxEmbedText {
						t.Errorf("piece %d is %d characters, more than Discord's %d", i+1, l, discord.MaxEmbedText)
					}
					if i == 0 {
						p = strings.TrimPrefix(p, lead)
					}
					if !testkit.OnlyCopiesOf(p, c) {
						t.Fatalf("piece %d splits %s %q: it begins %q and ends %q", i+1, name, c, firstRunes(p, 4), lastRunes(p, 4))
					}
					total += strings.Count(p, c)
				}
				if total != n {
					t.Errorf("the pieces hold %d of the %d characters", total, n)
				}
			})
		}
	}
}

// A button's label too long for Discord is shortened, with "…", after a whole character as
// shown.
func TestAShortenedLabelEndsAfterAWholeCharacter(t *testing.T) {
	for name, c := range testkit.ShownCharacters {
		for _, lead := range []string{"", "x", "xy", "xyz"} {
			e := newEnv(t)
			e.handler.reply = func(bot.Request) []bot.Reply {
				return []bot.Reply{{Text: "Leases", Actions: []bot.Action{{Label: lead + strings.Repeat(c, discord.MaxButtonLabel), Command: "/gpu list"}}}}
			}
			r := e.send(discordtest.Command(in(alice), "gpu", "help"))
			bs := r.buttons()
			if len(bs) != 1 {
				t.Fatalf("%d buttons, want 1", len(bs))
			}
			label := bs[0].Label
			if utf8.RuneCountInString(label) > discord.MaxButtonLabel {
				t.Errorf("the label is %d characters, more than Discord's %d", utf8.RuneCountInString(label), discord.MaxButtonLabel)
			}
			head, clipped := strings.CutSuffix(strings.TrimPrefix(label, lead), "…")
			if !clipped || !testkit.OnlyCopiesOf(head, c) {
				t.Errorf("a label of %s %q shortened reads %q; want whole ones and …", name, c, lastRunes(label, 6))
			}
		}
	}
}

func firstRunes(s string, n int) string { r := []rune(s); return string(r[:min(n, len(r))]) }
func lastRunes(s string, n int) string  { r := []rune(s); return string(r[max(0, len(r)-n):]) }

// A single character longer than an embed (a letter under thousands of marks) is still delivered,
// cut where it must be, each piece within Discord's limit.
func TestACharacterLongerThanAnEmbedIsStillDelivered(t *testing.T) {
	e := newEnv(t)
	text := "a" + strings.Repeat("\u0301", 2*discord.MaxEmbedText)
	e.handler.reply = func(bot.Request) []bot.Reply { return []bot.Reply{{Text: text}} }
	body := discordtest.Command(in(alice), "gpu", "help")
	r := e.send(body)
	e.wait()
	pieces := piecesOf(e, body, r)
	for i, p := range pieces {
		if l := utf8.RuneCountInString(p); l > discord.MaxEmbedText {
			t.Errorf("piece %d is %d characters, more than Discord's %d", i+1, l, discord.MaxEmbedText)
		}
	}
	if got := strings.Join(pieces, ""); got != text {
		t.Errorf("the pieces hold %d of the text's %d code points", utf8.RuneCountInString(got), utf8.RuneCountInString(text))
	}
}

// Bytes that are no UTF-8 (each shown as �) before the cut do not move it past the limit.
func TestAHardCutAfterInvalidBytesKeepsToTheLimit(t *testing.T) {
	e := newEnv(t)
	e.handler.reply = func(bot.Request) []bot.Reply {
		return []bot.Reply{{Text: strings.Repeat("\xff", 3000) + strings.Repeat("👍🏽", 3000)}}
	}
	body := discordtest.Command(in(alice), "gpu", "help")
	r := e.send(body)
	e.wait()
	for i, p := range piecesOf(e, body, r) {
		if l := utf8.RuneCountInString(p); l > discord.MaxEmbedText {
			t.Errorf("piece %d is %d characters, more than Discord's %d", i+1, l, discord.MaxEmbedText)
		}
		if i > 0 && !testkit.OnlyCopiesOf(p, "👍🏽") {
			t.Errorf("piece %d splits a skin tone: it begins %q", i+1, firstRunes(p, 3))
		}
	}
}
