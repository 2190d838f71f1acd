package slack_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/store/storetest"
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

// When Slack will not say who typed a command because of how the app is installed (a scope it
// lacks, a token Slack no longer takes), the user is told that trying again will not help and
// whom to tell, instead of being asked to try again in a minute; a passing failure still says so.
func TestAUserSlackWillNotNameIsToldWhy(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	for _, c := range []struct{ slackErr, want, not string }{
		{"missing_scope", "whoever runs Quartermaster", "try again"},
		{"token_revoked", "whoever runs Quartermaster", "try again"},
		{"internal_error", "try again", "whoever runs"},
	} {
		e.slack.mu.Lock()
		e.slack.infoError = c.slackErr
		e.slack.mu.Unlock()
		trigger := e.command("UBOB", "list")
		e.wait()
		got := e.responseTo(trigger).Text
		if !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("users.info answered %s; the user was told %q", c.slackErr, got)
		}
		if !strings.Contains(got, c.slackErr) && c.slackErr != "internal_error" {
			t.Errorf("the answer does not name Slack's %s for the admin: %q", c.slackErr, got)
		}
	}
	if n := len(e.leases()); n != 0 {
		t.Errorf("%d leases", n)
	}
}

// A notice to someone whose Slack account is deactivated (a budget owner who left) is not posted
// into a conversation nobody reads: it fails saying the account is deactivated and what to change.
func TestANoticeToADeactivatedAccountSaysSo(t *testing.T) {
	f := newFakeSlack(t)
	f.users["UHEMI"] = "hemi@harbor.example"
	f.deactivated = map[string]bool{"UHEMI": true}
	a := newDeliverer(t, f)
	err := a.Send(t.Context(), bot.Reply{To: "hemi@harbor.example", Text: "Approval needed: L-6"})
	if err == nil || !strings.Contains(err.Error(), "deactivated") || !strings.Contains(err.Error(), "hemi@harbor.example") {
		t.Errorf("a notice to a deactivated account: %v", err)
	}
	if posts, _, _, _ := f.snapshot(); len(posts) != 0 {
		t.Errorf("posted to a deactivated account: %+v", posts)
	}
}
