package discord_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// A class typed with accents the policy's names do not have (names are a to z, and the grammar
// refuses "éco-l4" naming eco-l4, the class meant) is suggested as the classes that match it with
// the accents left out; a part typed in capitals or with spaces around it matches the same.
func TestAClassTypedWithAccentsIsSuggested(t *testing.T) {
	var classes []string
	for i := range 28 {
		classes = append(classes, fmt.Sprintf("l40s-%02d", i))
	}
	classes = append(classes, "h200-sxm", "eco-l4")
	e := newEnv(t, func(c *discord.Config) {
		for _, cmd := range c.Commands {
			for i := range cmd.Options {
				if cmd.Options[i].Name == "class" {
					cmd.Options[i].Choices = classes
				}
			}
		}
	})
	for typed, want := range map[string]string{"éco": "eco-l4", " ÉCO-L4 ": "eco-l4", "SXM": "h200-sxm", "l40s-2": "l40s-20 l40s-21 l40s-22 l40s-23 l40s-24 l40s-25 l40s-26 l40s-27"} {
		r := e.send(discordtest.Autocomplete(in(alice), "gpu", "request", discordtest.Opt{Name: "class", Value: typed, Focused: true}))
		var got []string
		for _, c := range r.Data.Choices {
			got = append(got, fmt.Sprint(c.Value))
		}
		if strings.Join(got, " ") != want {
			t.Errorf("typed %q: suggested %q, want %q", typed, got, want)
		}
	}
}
