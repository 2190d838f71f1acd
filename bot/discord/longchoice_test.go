package discord_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// A suggestion whose value is longer than Discord takes (100 characters) is not offered: shortened,
// it would name nothing the command takes. Every value offered, sent back as the option, reaches
// the command as it was suggested.
func TestAnAutocompleteValueTooLongForDiscordIsNotOffered(t *testing.T) {
	long := "kestrel-" + strings.Repeat("é", 95) // 103 characters
	fits := "kestrel-" + strings.Repeat("a", 92) // 100 characters
	e := newEnv(t, func(c *discord.Config) {
		c.Complete = func(context.Context, string, string, string) []discord.Choice {
			return []discord.Choice{{Name: "the long one", Value: long}, {Name: "the one that fits", Value: fits}, {Value: "K-3"}}
		}
	})
	r := e.send(discordtest.Autocomplete(in(alice), "gpu", "status", discordtest.Opt{Name: "lease", Value: "k", Focused: true}))
	var offered []string
	for _, c := range r.Data.Choices {
		v, _ := c.Value.(string)
		if utf8.RuneCountInString(v) > 100 {
			t.Errorf("offered a value of %d characters, more than Discord takes", utf8.RuneCountInString(v))
		}
		offered = append(offered, v)
	}
	if strings.Join(offered, " ") != fits+" K-3" {
		t.Fatalf("offered %q; want the value that fits and K-3, not the long one (nor a shortened copy of it)", offered)
	}
	for _, v := range offered {
		e.send(discordtest.Command(in(alice), "gpu", "status", discordtest.Opt{Name: "lease", Value: v}))
		reqs := e.handler.requests()
		if last := reqs[len(reqs)-1]; last.Text != "/gpu status "+v {
			t.Errorf("the suggestion %q sent back ran %q", v, last.Text)
		}
	}
}
