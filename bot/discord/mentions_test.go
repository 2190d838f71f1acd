package discord_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// live finds what Discord would parse in text a user typed: @everyone, @here, user, role and
// channel mentions, and masked links.
var live = regexp.MustCompile(`@everyone|@here|<@|<#|\]\(`)

// User text that reaches Discord, in an answer, a DM or a team channel's post, in the text, a
// section's title or text, or a field, can neither ping anyone nor dress a link up as something
// else: mentions and masked links are broken up, and every message goes with allowed_mentions
// empty.
func TestUserTextCannotPingOrLinkInDiscord(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var bodies [][]byte
	e.fake.OnRequest(func(r *http.Request) {
		if r.Method != http.MethodPost && r.Method != http.MethodPatch || r.Body == nil {
			return
		}
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		if bytes.Contains(b, []byte(`"embeds"`)) {
			mu.Lock()
			bodies = append(bodies, b)
			mu.Unlock()
		}
	})
	e.handler.reply = func(req bot.Request) []bot.Reply {
		typed := strings.TrimPrefix(req.Text, "/gpu deny L-7 ")
		sec := bot.Section{Title: "L-7 — " + typed, Text: "Because: " + typed, Fields: []bot.Field{{Label: "Reason", Value: typed}, {Label: typed, Value: "x"}}}
		return []bot.Reply{
			{Text: "Denied L-7: " + typed, Sections: []bot.Section{sec}},
			{To: "dana@acme.example", Text: "alice says: " + typed, Sections: []bot.Section{sec}},
		}
	}
	for _, h := range []string{
		"@everyone look <@&700000000000000001> [click to approve](https://evil.example)",
		"@here <@100000000000000004> <#600000000000000002> [[ok]](https://evil.example/x)",
	} {
		body := discordtest.Command(in(alice), "gpu", "deny", discordtest.Opt{Name: "lease", Value: "L-7"}, discordtest.Opt{Name: "reason", Value: h})
		req := e.signer.Request(e.srv.URL+discord.Path, body)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var r response
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("answer %q: %v", raw, err)
		}
		if m := live.FindString(r.text()); m != "" {
			t.Errorf("the answer holds a live %q: %s", m, r.text())
		}
		if !strings.Contains(string(raw), `"allowed_mentions":{"parse":[]`) {
			t.Errorf("the answer may ping: %s", raw)
		}
		if err := e.adapter.Send(context.Background(), bot.Reply{To: "#vision-gpu", Text: "Approval needed because " + h,
			Sections: []bot.Section{{Title: h, Fields: []bot.Field{{Label: "Because", Value: h}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	e.wait()
	posts := e.fake.Posts()
	if len(posts) < 4 {
		t.Fatalf("%d posts, want the DMs and the channel's", len(posts))
	}
	for _, p := range posts {
		if m := live.FindString(p.Text()); m != "" {
			t.Errorf("a post to %s holds a live %q: %s", p.ChannelID, m, p.Text())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, b := range bodies {
		if !bytes.Contains(b, []byte(`"allowed_mentions":{"parse":[]`)) {
			t.Errorf("a message may ping: %s", b)
		}
	}
}
