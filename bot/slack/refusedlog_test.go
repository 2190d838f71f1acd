package slack_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/testkit"
)

// A request refused for its signature is logged with what an admin checks when every request is
// refused so: a signature that does not match names SLACK_SIGNING_SECRET and where Slack shows it
// (not the Client Secret or the Verification Token beside it); a timestamp far off says by how
// much, and that this host's clock may be wrong; missing headers say a proxy may drop them.
func TestARefusedRequestIsLoggedWithWhatToCheck(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	var log testkit.SyncBuffer
	e.useHTTPAdapter(e.bot, func(c *slackbot.Config) { c.Logger = slog.New(slog.NewTextHandler(&log, nil)) })
	body := e.commandBody("UALICE", "list", e.newTrigger())
	cases := []struct {
		name string
		send func() int
		want []string
	}{
		{"the client secret as signing secret", func() int { return e.send("/slack/commands", body, "the-client-secret", time.Now(), nil) },
			[]string{"SLACK_SIGNING_SECRET", "Signing Secret", "Basic Information", "Verification Token"}},
		{"a clock 20 minutes slow", func() int { return e.send("/slack/commands", body, secret, time.Now().Add(-20*time.Minute), nil) },
			[]string{"20m", "clock"}},
		{"no signature headers", func() int {
			return e.send("/slack/commands", body, secret, time.Now(), map[string]string{"X-Slack-Signature": "", "X-Slack-Request-Timestamp": ""})
		}, []string{"X-Slack-Signature", "proxy"}},
	}
	for _, c := range cases {
		before := len(log.String())
		if code := c.send(); code != 401 {
			t.Errorf("%s: HTTP %d, want 401", c.name, code)
		}
		got := log.String()[before:]
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the log does not say %q:\n%s", c.name, w, got)
			}
		}
		if strings.Contains(got, secret) || strings.Contains(got, "the-client-secret") {
			t.Errorf("%s: the log shows a secret:\n%s", c.name, got)
		}
	}
	e.wait()
	if n := len(e.leases()); n != 0 {
		t.Errorf("%d leases", n)
	}
}
