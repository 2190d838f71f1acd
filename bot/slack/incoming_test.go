package slack_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// What Slack sends for a slash command reaches the commands as the person typed it: the &, < and
// > Slack escaped are themselves again, an email Slack made a mailto link is the email, and a
// mention or a link Slack made is the name it shows (@dana, #vision-gpu, @vision-leads, the
// link's text).
func TestSlackCommandTextReachesTheCommandsAsTyped(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	var mu sync.Mutex
	got := map[string]string{}
	e.useHTTPAdapter(bot.HandlerFunc(func(_ context.Context, req bot.Request) []bot.Reply {
		mu.Lock()
		defer mu.Unlock()
		got[req.Key] = req.Text
		return []bot.Reply{{Text: "ok"}}
	}), nil)
	for _, c := range []struct{ sent, want string }{
		{`request 2 interactive for 4h because "A&amp;B &lt;urgent&gt;"`, `/gpu request 2 interactive for 4h because "A&B <urgent>"`},
		{`unlink <mailto:ann@example.com|ann@example.com>`, `/gpu unlink ann@example.com`},
		{`unlink <mailto:ann@example.com>`, `/gpu unlink ann@example.com`},
		{`quota request +1 train because ask <@U0DANA|dana> in <#C0VISION|vision-gpu> or <!subteam^S0123|@vision-leads>`,
			`/gpu quota request +1 train because ask @dana in #vision-gpu or @vision-leads`},
		{`deny L-1 see <https://wiki.example/gpu|wiki.example/gpu> and <https://x.example/?a=1&amp;b=2>`,
			`/gpu deny L-1 see wiki.example/gpu and https://x.example/?a=1&b=2`},
		{`deny L-1 <!channel> <!here|here> <@U0DANA> <#C0VISION>`, `/gpu deny L-1 @channel @here @U0DANA #C0VISION`},
		// Typed as such: an escape and a mention written out by hand stay what was typed.
		{`deny L-1 &amp;lt;!channel&amp;gt; &lt;@U0DANA&gt; &amp;amp;`, `/gpu deny L-1 &lt;!channel&gt; <@U0DANA> &amp;`},
		{`deny L-1 <https://evil.example|&lt;b&gt; &amp; co>`, `/gpu deny L-1 <b> & co`},
	} {
		trigger := e.newTrigger()
		if code := e.signed("/slack/commands", e.sentBody("UALICE", c.sent, trigger), nil); code != http.StatusOK {
			t.Fatalf("%s: HTTP %d", c.sent, code)
		}
		e.wait()
		mu.Lock()
		text := got["slack:"+trigger]
		mu.Unlock()
		if text != c.want {
			t.Errorf("Slack sent %q; the commands read %q, want %q", c.sent, text, c.want)
		}
	}
}

// A reason typed with &, < and > is shown to the budget owner and to the requester as typed:
// escaped once for Slack, never A&amp;amp;B, and never a live mention.
func TestATypedReasonIsShownAsTyped(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	id := overQuota(e)
	e.command("UALICE", `quota request +1 interactive for 1d because A&B <urgent> <!channel>`)
	e.wait()
	e.command("UDANA", "deny "+id+" A&B <later> <!here>")
	e.wait()
	shown := func(to, want string) {
		t.Helper()
		var texts []string
		for _, m := range e.postsTo(dm(to)) {
			texts = append(texts, m.Text, textIn(m.Blocks))
		}
		all := strings.Join(texts, "\n")
		if !strings.Contains(all, want) {
			t.Errorf("%s was not shown %q: %s", to, want, all)
		}
		if strings.Contains(all, "&amp;amp;") || strings.Contains(all, "&amp;lt;") || strings.Contains(all, "&amp;gt;") {
			t.Errorf("%s was shown text escaped twice: %s", to, all)
		}
	}
	shown("UDANA", "A&amp;B &lt;urgent&gt; &lt;!channel&gt;")
	shown("UALICE", "A&amp;B &lt;later&gt; &lt;!here&gt;")
}
