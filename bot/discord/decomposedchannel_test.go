package discord_test

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
)

// A channel with an accented letter written one way in discord.channels (ü as one character) and
// the other way in a team's channel (u and a combining diaeresis, as text copied from macOS holds
// it) looks the same and is one channel: its notices are posted to its Discord id.
func TestAChannelWrittenInEitherUnicodeFormIsOneChannel(t *testing.T) {
	for _, c := range []struct{ mapped, to string }{
		{"#k\u00fchlung-gpu", "#ku\u0308hlung-gpu"},
		{"#ku\u0308hlung-gpu", "#K\u00fchlung-GPU"},
	} {
		e := newEnv(t, func(cfg *discord.Config) { cfg.Channels = map[string]string{c.mapped: team} })
		if err := e.adapter.Send(context.Background(), bot.Reply{To: c.to, Text: "Approval needed: L-9."}); err != nil {
			t.Fatalf("mapped %+q, sent to %+q: %v", c.mapped, c.to, err)
		}
		e.wait()
		if ps := e.fake.PostsTo(team); len(ps) != 1 || !strings.Contains(ps[0].Text(), "Approval needed: L-9.") {
			t.Errorf("mapped %+q, sent to %+q: posts to the channel = %+v", c.mapped, c.to, e.fake.Posts())
		}
	}
}
