package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
)

// lookalikeMarks are the characters that stand in for *, _ and ~ where Slack would format them.
const lookalikeMarks = "\u2217\u02cd\u223c"

// shownTexts are the mrkdwn texts of a message: its top-level text and each text of its blocks.
func shownTexts(m message) []string {
	out := []string{m.Text}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if t, ok := x["text"].(string); ok && x["type"] != "plain_text" {
				out = append(out, t)
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	for _, b := range m.Blocks {
		walk(b)
	}
	return out
}

// The sentences the bot writes itself reach Slack with their own characters as written: "- and
// _" in a refusal is an underscore, not a look-alike, in the notification text and in the
// blocks alike. What a user typed is still never formatted: their _x_ does not become italics
// (it shows, as typed, with look-alikes), and a <!here> they typed pings no one.
func TestTheBotsOwnSentencesReachSlackAsWritten(t *testing.T) {
	e := newTuataraEnv(t)
	for _, tc := range []struct{ ask, own, typed string }{
		{"request 1 kete for 1h data Ópen", "digits, dots, - and _; did you mean open?", ""},
		{"request 1 kete for 1h data _x_", "digits, dots, - and _.", `"_x_"`},
		{"request 1 kete for 1h data *x*", "digits, dots, - and _.", `"*x*"`},
		{"request 1 kete for 1h data ~x~", "digits, dots, - and _.", `"~x~"`},
	} {
		got := e.ask("UTAMA", tc.ask)
		for _, s := range shownTexts(got) {
			if !strings.Contains(s, tc.own) {
				t.Errorf("/gpu %s: %q does not say %q as written", tc.ask, s, tc.own)
			}
			if tc.typed == "" {
				if strings.ContainsAny(s, lookalikeMarks) {
					t.Errorf("/gpu %s: %q shows a look-alike mark where nothing was typed with one", tc.ask, s)
				}
				continue
			}
			if strings.Contains(s, tc.typed) {
				t.Errorf("/gpu %s: Slack would format the typed %s in %q", tc.ask, tc.typed, s)
			}
			if !strings.Contains(readAsTyped(s), tc.typed) {
				t.Errorf("/gpu %s: the typed %s does not read as typed in %q", tc.ask, tc.typed, s)
			}
		}
	}

	// A notice the bot writes with its own marks (none of which could format anything) keeps them;
	// a section's title and text are judged together with the bold the title is shown in.
	r := bot.Reply{To: "tama@tuatara.example.nz", Text: "Names are letters, digits, - and _ (like a_b); 2 * 3 is 6 ~ give or take.",
		Sections: []bot.Section{{Title: "ngaio*", Text: "pattern . _ - + / only"}}}
	if err := e.current().Send(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	e.wait()
	posts := e.postsTo(dm("UTAMA"))
	if len(posts) == 0 {
		t.Fatal("the notice was not posted")
	}
	notice := posts[len(posts)-1]
	for _, s := range shownTexts(notice) {
		if strings.Contains(s, "Names are") && !strings.Contains(s, "Names are letters, digits, - and _ (like a_b); 2 * 3 is 6 ~ give or take.") {
			t.Errorf("the notice's own sentence reached Slack as %q", s)
		}
		if strings.Contains(s, "pattern") && !strings.Contains(s, "pattern . _ - + / only") {
			t.Errorf("the section's own text reached Slack as %q", s)
		}
		if strings.Contains(s, "*ngaio**") {
			t.Errorf("the title's * would close the bold it is shown in: %q", s)
		}
	}

	// Pings typed (or sent as Slack's mentions) never reach Slack as pings.
	e.ask("UTAMA", "request 1 kete for 1h data <!here>_x_")
	e.sent("UTAMA", "request 1 kete for 1h team <!channel> data _<!here>_")
	for _, s := range mrkdwnTexts(e) {
		if loc := rawControl.FindStringIndex(s); loc != nil {
			t.Errorf("typed text reached Slack unescaped (%q) in %q", s[loc[0]:min(loc[1]+20, len(s))], s)
		}
	}
}

// Which marks reach Slack as their look-alikes: those that could pair with another of their kind
// to open and close bold, italics or strike-through, wherever they came from; a mark that can
// pair with none (a space or nothing on either side, inside a word, no partner) is kept.
func TestOnlyMarksThatCouldFormatAreShownAsLookAlikes(t *testing.T) {
	for in, want := range map[string]string{
		"letters, digits, dots, - and _.":  "letters, digits, dots, - and _.",
		"use . _ - + / only":               "use . _ - + / only",
		"class a100_80g, 2 * 3 ~ 6":        "class a100_80g, 2 * 3 ~ 6",
		"x_ and _y":                        "x_ and _y",
		"_x_":                              "\u02cdx\u02cd",
		"*now* and ~not~":                  "\u2217now\u2217 and \u223cnot\u223c",
		"_a few words_ - and _":            "\u02cda few words\u02cd - and _",
		"- and _. \"_x\" is no data class": "- and \u02cd. \"\u02cdx\" is no data class",
		"**twice**":                        "\u2217\u2217twice\u2217\u2217",
		"code `_x_` stays; _y_ does not":   "code `_x_` stays; \u02cdy\u02cd does not",
		"<!here> _x_ & done":               "&lt;!here&gt; \u02cdx\u02cd &amp; done",
	} {
		if got, _ := slackbot.Render(bot.Reply{Text: in}, slackbot.MaxMessageBlocks); got != want {
			t.Errorf("%q reached Slack as %q, want %q", in, got, want)
		}
	}
}
