package policy

import (
	"os"
	"strings"
	"testing"
)

// The teams' channels discord.channels does not map are pointed out, at the team's channel, for
// a service that runs Discord without Slack (policy check asks when the environment says so):
// Discord cannot post there. They are no warning of the policy itself, which may be Slack's too.
func TestATeamChannelDiscordCannotPostToIsPointedOut(t *testing.T) {
	src, err := os.ReadFile("../../commands/testdata/harbor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load(append(src, []byte("discord:\n  channels: {\"#quake-lab\": \"200000000000000055\"}\n")...), "harbor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := warningText(p.DiscordOnly)
	want := `team kelp: its channel #kelp-forest has no Discord channel id in discord.channels, so Discord cannot post there`
	if !strings.Contains(text, "38: "+want) || !strings.Contains(text, `"#kelp-forest": "CHANNEL_ID"`) || strings.Contains(text, "#quake-lab") {
		t.Errorf("Discord's warnings:\n%s\nwant at line 38 %q, and none of #quake-lab", text, want)
	}
	if text := warningText(p.Warnings); strings.Contains(text, "Discord") {
		t.Errorf("the policy's own warnings speak of Discord:\n%s", text)
	}
}
