package slack_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/internal/testkit"
)

// A text longer than a section block with no space or line break to cut at is cut between two
// characters as they are shown, never inside one, and each block keeps to Slack's limit.
func TestAHardCutInSlackFallsBetweenCharactersAsShown(t *testing.T) {
	for name, c := range testkit.ShownCharacters {
		for _, lead := range []string{"", "x", "xy", "xyz"} {
			t.Run(fmt.Sprintf("%s after %q", name, lead), func(t *testing.T) {
				n := 2*slackbot.MaxSectionText/len([]rune(c)) + 7
				_, blocks := slackbot.Render(bot.Reply{Text: lead + strings.Repeat(c, n)}, slackbot.MaxMessageBlocks)
				bs := checkLimits(t, "the text", blocks, slackbot.MaxMessageBlocks)
				var texts []string
				for _, b := range bs {
					if tx, ok := b["text"].(map[string]any); ok {
						s, _ := tx["text"].(string)
						texts = append(texts, s)
					}
				}
				if len(texts) < 2 {
					t.Fatalf("the text is in %d blocks; want it cut", len(texts))
				}
				total := 0
				for i, s := range texts {
					if i == 0 {
						s = strings.TrimPrefix(s, lead)
					}
					if !testkit.OnlyCopiesOf(s, c) {
						r := []rune(s)
						t.Fatalf("block %d splits %s %q: it begins %q and ends %q", i+1, name, c, string(r[:min(4, len(r))]), string(r[max(0, len(r)-4):]))
					}
					total += strings.Count(s, c)
				}
				if total != n {
					t.Errorf("the blocks hold %d of the %d characters", total, n)
				}
			})
		}
	}
}

// A button's label too long for Slack is shortened, with "…", after a whole character as shown.
func TestAShortenedSlackLabelEndsAfterAWholeCharacter(t *testing.T) {
	for name, c := range testkit.ShownCharacters {
		for _, lead := range []string{"", "x", "xy", "xyz"} {
			_, blocks := slackbot.Render(bot.Reply{Text: "Leases", Actions: []bot.Action{{Label: lead + strings.Repeat(c, slackbot.MaxButtonLabel), Command: "/gpu list"}}}, slackbot.MaxMessageBlocks)
			bs := checkLimits(t, "the button", blocks, slackbot.MaxMessageBlocks)
			var labels []string
			for _, b := range bs {
				els, _ := b["elements"].([]any)
				for _, el := range els {
					m, _ := el.(map[string]any)
					tx, _ := m["text"].(map[string]any)
					if s, ok := tx["text"].(string); ok {
						labels = append(labels, s)
					}
				}
			}
			if len(labels) != 1 {
				t.Fatalf("%d buttons, want 1", len(labels))
			}
			head, clipped := strings.CutSuffix(strings.TrimPrefix(labels[0], lead), "…")
			if !clipped || !testkit.OnlyCopiesOf(head, c) {
				r := []rune(labels[0])
				t.Errorf("a label of %s %q shortened ends %q; want whole ones and …", name, c, string(r[max(0, len(r)-6):]))
			}
		}
	}
}

// Bytes that are no UTF-8 (each shown as �) before a cut do not move it past Slack's limit.
func TestAHardCutAfterInvalidBytesKeepsToSlacksLimit(t *testing.T) {
	_, blocks := slackbot.Render(bot.Reply{Text: strings.Repeat("\xff", 2000) + strings.Repeat("👍🏽", 3000)}, slackbot.MaxMessageBlocks)
	checkLimits(t, "the text", blocks, slackbot.MaxMessageBlocks)
}
