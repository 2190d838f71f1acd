package slack_test

import (
	"strings"
	"testing"
)

// A Slack profile that showed no email (the app was installed without users:read.email) is asked
// again at the next command: once an admin adds the scope and reinstalls, the person is known at
// once instead of being told for up to an hour that their profile shows none.
func TestAnEmailThatAppearsIsSeenAtTheNextCommand(t *testing.T) {
	e := newHarborEnv(t)
	e.slack.mu.Lock()
	e.slack.users["UWIREMU"] = "" // the profile's email is not shown to the app
	e.slack.mu.Unlock()
	trigger := e.command("UWIREMU", "quota")
	e.wait()
	if got := e.responseTo(trigger).Text; !strings.Contains(got, "shows none") {
		t.Fatalf("a profile without an email was answered %q", got)
	}
	e.slack.mu.Lock()
	e.slack.users["UWIREMU"] = "wiremu@harbor.example" // the scope was added and the app reinstalled
	e.slack.mu.Unlock()
	trigger = e.command("UWIREMU", "quota")
	e.wait()
	if got := e.responseTo(trigger).Text; strings.Contains(got, "shows none") || !strings.Contains(got, "seismic") {
		t.Errorf("after the email became visible, /gpu quota answered %q; want team seismic's quota", got)
	}
}
