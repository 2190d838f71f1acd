package commands

import (
	"strings"
	"testing"
)

// A Slack mention typed to /gpu unlink (@rita, or <@U…> written out) names no account Quartermaster
// can look up: Slack passes it as the name typed. The refusal says so, says how to write the
// account instead, and gives an example that works, with a person of the policy.
func TestUnlinkOfASlackMentionSaysHowToNameTheAccount(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	h.bot.SSO = helpOnlySSO{}
	for _, in := range []string{"/gpu unlink @rita", "/gpu unlink <@U024BE7LH>", "/gpu unlink <@W024BE7LH|rita>"} {
		got := h.say("rita@borealis.example", in).Text
		for _, want := range []string{"Slack", "their email", "slack:WORKSPACE_ID:MEMBER_ID", "Copy member ID", "Example: /gpu unlink rita@borealis.example"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s answered %q; want %q in it", in, got, want)
			}
		}
	}
}
