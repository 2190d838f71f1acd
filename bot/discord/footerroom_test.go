package discord_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// However full its messages are, a list of thousands of leases cut at the last message keeps
// within Discord's 6000 characters a message, the footer that says how many more there are
// counted: Discord refuses a message past it, and the answer would never show.
func TestACutListKeepsItsFooterWithinDiscordsCharacters(t *testing.T) {
	e := newEnv(t)
	for pad := 0; pad < 90; pad++ {
		r := bot.Reply{Text: "Your leases (12000):"}
		for i := 1; i <= 12000; i++ {
			r.Sections = append(r.Sections, bot.Section{Title: fmt.Sprintf("L-%d", i), Text: "active " + strings.Repeat("x", pad)})
		}
		e.handler.reply = func(bot.Request) []bot.Reply { return []bot.Reply{r} }
		body := discordtest.Command(in(alice), "gpu", "help")
		resp := e.send(body)
		e.wait()
		first := discordtest.Message{Embeds: resp.Data.Embeds, Ephemeral: resp.Data.Flags&64 != 0}
		all := append([]discordtest.Message{first}, e.fake.FollowUps(discordtest.ID(body))...)
		if len(all) != discord.MaxParts {
			t.Fatalf("pad %d: %d messages, want %d", pad, len(all), discord.MaxParts)
		}
		for i, m := range all {
			checkMessage(t, fmt.Sprintf("pad %d, part %d", pad, i+1), m)
		}
		if t.Failed() {
			return
		}
	}
}
