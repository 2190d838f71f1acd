package slack_test

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
)

// The example that ends a refusal is a command to copy: it reaches Slack in a code span, where
// Slack formats nothing, with the characters as typed. A reason's _a_ in the example stays
// underscores (not the look-alike ˍ, which, copied, would be another reason), in the notification
// text and in the blocks alike.
func TestTheExampleIsACodeSpanToCopyAsTyped(t *testing.T) {
	e := newPetrelEnv(t)
	got := e.ask("USVEN", "quota request +2 a100-80g for because _a_ *big* deadline")
	want := "Example: `/gpu quota request +2 a100-80g because _a_ *big* deadline`"
	for _, s := range shownTexts(got) {
		if !strings.Contains(s, "Example:") {
			continue
		}
		if !strings.HasSuffix(s, want) {
			t.Errorf("the refusal reached Slack as %q; want it to end %q", s, want)
		}
	}
	if got := e.ask("USVEN", "help nosuchtopic"); !strings.HasSuffix(got.Text, "Example: `/gpu help`") {
		t.Errorf("/gpu help nosuchtopic answered %q", got.Text)
	}
}

// Only the example a line ends with becomes code: a line that names a command in its prose keeps
// it as prose, an example holding a backtick (which would end the code) stays prose too, and a
// long reply is never cut inside the example's code.
func TestOnlyTheExampleIsCode(t *testing.T) {
	for in, want := range map[string]string{
		"Use /gpu help. Example: /gpu quota _x_":          "Use /gpu help. Example: `/gpu quota _x_`",
		"One.\nExample: /gpu a\nTwo.":                     "One.\nExample: `/gpu a`\nTwo.",
		"No example: /gpu quota _x_":                      "No example: /gpu quota \u02cdx\u02cd",
		"Example: /gpu quota `_x_":                        "Example: /gpu quota `\u02cdx\u02cd",
		"\"<!here>\" is no team. Example: /gpu quota a&b": "\"&lt;!here&gt;\" is no team. Example: `/gpu quota a&amp;b`",
	} {
		if got, _ := slackbot.Render(bot.Reply{Text: in}, slackbot.MaxMessageBlocks); got != want {
			t.Errorf("%q reached Slack as %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("word ", 580) + "Example: /gpu request " + strings.Repeat("x ", 200)
	_, blocks := slackbot.Render(bot.Reply{Text: long}, slackbot.MaxMessageBlocks)
	for i, b := range blocks {
		sec, ok := b.(*slack.SectionBlock)
		if ok && sec.Text != nil && strings.Count(sec.Text.Text, "`")%2 != 0 {
			t.Errorf("section %d opens or closes code it does not close or open: …%q", i, sec.Text.Text[max(len(sec.Text.Text)-40, 0):])
		}
	}
}
