package discord_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// On a walk through Kestrel Compute's approvals, every message the bot sends (answers given in
// the acknowledgement and by editing a deferral, follow-ups, DMs, posts to a team's channel and
// their edits, a late answer by DM) goes with allowed_mentions empty, and none holds a live
// @everyone, @here, mention or masked link that someone typed.
func TestEveryMessageOfAWalkPingsNobody(t *testing.T) {
	for _, within := range []time.Duration{5 * time.Second, time.Nanosecond} {
		k := newKestrel(t, func(c *discord.Config) { c.AnswerWithin = within })
		var mu sync.Mutex
		var bodies []string
		k.fake.OnRequest(func(r *http.Request) {
			if r.Method != http.MethodPost && r.Method != http.MethodPatch || r.Body == nil {
				return
			}
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			if bytes.Contains(b, []byte(`"embeds"`)) {
				mu.Lock()
				bodies = append(bodies, string(b))
				mu.Unlock()
			}
		})
		hostile := "@everyone @here <@&730000000000000077> <@!810000000000000002> <@810000000000000003> [approve](https://evil.example)"
		var answers []response
		cmd := func(who string, sub string, opts ...discordtest.Opt) response {
			r := k.run(kin(who), sub, opts...)
			answers = append(answers, r)
			return r
		}
		cmd(kTam, "request", discordtest.Opt{Name: "gpus", Value: 1}, discordtest.Opt{Name: "class", Value: "l40s"}, discordtest.Opt{Name: "duration", Value: "1h"})
		cmd(kJorg, "deny", discordtest.Opt{Name: "lease", Value: "L-1"}, discordtest.Opt{Name: "reason", Value: hostile})
		cmd(kZoe, "quota-request", discordtest.Opt{Name: "gpus", Value: 2}, discordtest.Opt{Name: "class", Value: "h200-sxm"}, discordtest.Opt{Name: "reason", Value: hostile})
		cmd(kNoemi, "approve", discordtest.Opt{Name: "lease", Value: "L-2"})
		cmd(kZoe, "quota", discordtest.Opt{Name: "team", Value: hostile})
		cmd(kZoe, "list")
		cmd(kJorg, "policy")
		k.wait()
		mu.Lock()
		if within < time.Second && len(bodies) < len(answers) {
			t.Errorf("deferred: %d message bodies, fewer than the %d answers", len(bodies), len(answers))
		}
		for _, b := range bodies {
			if !strings.Contains(b, `"allowed_mentions":{"parse":[]`) {
				t.Errorf("a message may ping: %.300s", b)
			}
		}
		mu.Unlock()
		for _, m := range append(k.fake.Posts(), append(k.fake.Edits(), k.fake.Answers()...)...) {
			if l := live.FindString(m.Text()); l != "" {
				t.Errorf("a message to %s holds a live %q: %q", m.ChannelID, l, m.Text())
			}
		}
		for _, r := range answers {
			if l := live.FindString(r.text()); l != "" {
				t.Errorf("an answer holds a live %q: %q", l, r.text())
			}
		}
	}
}
