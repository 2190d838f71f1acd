package policy_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/nfc"
	"github.com/acme/quartermaster/internal/policy"
)

// The policy file is read as the program reads it: in Unicode NFC (nfc.Name).
func load(text string) (*policy.Policy, error) {
	return policy.Load([]byte(text), "harbor.yaml", nfc.Name)
}

func warnings(ws []policy.Problem) string {
	var all []string
	for _, w := range ws {
		all = append(all, fmt.Sprintf("%d: %s", w.Line, w.Msg))
	}
	return strings.Join(all, "\n")
}

// A team's channel and its discord.channels key written in the two Unicode forms of one accented
// letter (ü as one character, or u and a combining diaeresis as macOS copy-paste gives) look the
// same and are one channel: policy check neither calls the key a channel the policy does not name
// nor the team's channel one Discord cannot post to.
func TestDiscordChannelsMatchTheTeamsChannelInEitherUnicodeForm(t *testing.T) {
	src, err := os.ReadFile("../../commands/testdata/harbor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ team, key string }{
		{"#kelp-fo\u0308rest", "#kelp-f\u00f6rest"},
		{"#kelp-f\u00f6rest", "#Kelp-Fo\u0308rest"},
	} {
		text := strings.Replace(string(src), `"#kelp-forest"`, `"`+c.team+`"`, 1)
		if text == string(src) {
			t.Fatal("harbor.yaml no longer names #kelp-forest")
		}
		text += "discord:\n  channels: {\"" + c.key + "\": \"200000000000000055\"}\n"
		p, err := load(text)
		if err != nil {
			t.Fatalf("team channel %+q, key %+q: %v", c.team, c.key, err)
		}
		if w := warnings(p.Warnings); strings.Contains(w, "is no channel the policy names") {
			t.Errorf("team channel %+q, key %+q: warnings\n%s", c.team, c.key, w)
		}
		if w := warnings(p.DiscordOnly); strings.Contains(w, "team kelp:") {
			t.Errorf("team channel %+q, key %+q: Discord's warnings\n%s", c.team, c.key, w)
		}
	}
}

// Two keys of discord.channels that are one channel in the two Unicode forms are refused as the
// channel named twice, as two keys differing in case are.
func TestDiscordChannelsNamingOneChannelInBothUnicodeFormsIsRefused(t *testing.T) {
	src, err := os.ReadFile("../../commands/testdata/harbor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src) + "discord:\n  channels:\n    \"#kelp-f\u00f6rest\": \"200000000000000055\"\n    \"#kelp-fo\u0308rest\": \"200000000000000056\"\n"
	_, err = load(text)
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("two keys for one channel: %v; want it named twice", err)
	}
}
