package slack_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// A notice Slack will not take says, in the error the service logs and keeps with the notice,
// what the admin does about it: invite the bot to a private channel, check a channel's name, or
// give a person a Slack account with their email; Slack's own code stays in it.
func TestANoticeSlackRefusesSaysWhatToDo(t *testing.T) {
	f := newFakeSlack(t)
	f.refuse = map[string]string{"#kelp-forest": "not_in_channel", "#quake-lab": "channel_not_found", "#old-survey": "is_archived"}
	a := newDeliverer(t, f)
	for _, c := range []struct {
		to   string
		want []string
	}{
		{"#kelp-forest", []string{"not_in_channel", "not a member of #kelp-forest", "/invite @"}},
		{"#quake-lab", []string{"channel_not_found", "#quake-lab", "the policy", "invite"}},
		{"#old-survey", []string{"is_archived", "#old-survey is archived"}},
		{"rangi@harbor.example", []string{"users_not_found", "no Slack user", "rangi@harbor.example"}},
	} {
		err := a.Send(t.Context(), bot.Reply{To: c.to, Text: "L-4 waits for approval"})
		if err == nil {
			t.Errorf("%s: the notice was taken", c.to)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: the error does not say %q: %v", c.to, w, err)
			}
		}
	}
	for _, fn := range []func() error{
		func() error { return a.Deliver(t.Context(), bot.Reply{To: "#kelp-forest", Text: "showback"}) },
	} {
		if err := fn(); err == nil || !strings.Contains(err.Error(), "/invite @") {
			t.Errorf("a scheduled post to #kelp-forest: %v", err)
		}
	}
}
