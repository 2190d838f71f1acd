package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// typedMarks are the typed words as Slack's mrkdwn would format them: marks around a word.
var typedMarks = []string{"*now*", "_please_", "~not~"}

// typedWords are what a budget owner must read as the requester typed them.
const typedWords = "because *now* _please_ ~not~ this"

// A quota request's reason reaches the budget owner's approval post as typed: Slack shows none of
// its stars, underscores or tildes as bold, italics or strike-through, and its words read as
// they were typed (the marks are still there to see).
func TestReasonShowsAsTypedInApprovalPost(t *testing.T) {
	e := newHarborEnv(t)
	e.command("UWIREMU", "quota request +1 bench for 1d "+typedWords)
	e.wait()
	posts := e.postsTo(dm("UINES"))
	if len(posts) == 0 {
		t.Fatal("ines got no approval post")
	}
	seen := false
	for _, s := range mrkdwnTexts(e) {
		if !strings.Contains(s, "now") || !strings.Contains(s, "please") {
			continue
		}
		seen = true
		for _, m := range typedMarks {
			if strings.Contains(s, m) {
				t.Errorf("Slack would format %s of the typed reason in %q", m, s)
			}
		}
		if !strings.Contains(readAsTyped(s), "*now* _please_ ~not~") {
			t.Errorf("the reason does not read as typed in %q", s)
		}
	}
	if !seen {
		t.Fatal("the reason is shown nowhere in Slack")
	}
}

// readAsTyped is text as a reader sees it: the look-alike marks as the marks they show.
func readAsTyped(s string) string {
	return strings.NewReplacer("\u2217", "*", "\u02cd", "_", "\u223c", "~").Replace(s)
}

// A reason that begins with > is not shown as a quote where it begins a line (the Because field
// of the approval post), and still reads as typed.
func TestAReasonBeginningWithAngleIsNoQuoteInSlack(t *testing.T) {
	e := newHarborEnv(t)
	e.command("UWIREMU", "quota request +1 bench for 1d because > not a quote")
	e.wait()
	seen := false
	for _, s := range mrkdwnTexts(e) {
		if !strings.Contains(s, "not a quote") {
			continue
		}
		seen = true
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(line, "&gt;") || strings.HasPrefix(line, ">") {
				t.Errorf("Slack would show %q as a quote in %q", line, s)
			}
		}
		if !strings.Contains(strings.ReplaceAll(s, "\u203a", "&gt;"), "&gt; not a quote") {
			t.Errorf("the reason does not read as typed in %q", s)
		}
	}
	if !seen {
		t.Fatal("the reason is shown nowhere in Slack")
	}
}

// A link in a message (the sign-in link, whose token may hold an _ or a - anywhere) reaches
// Slack as it is: Slack links a URL as written, so a look-alike mark in it would lead nowhere.
func TestLinkReachesSlackAsItIs(t *testing.T) {
	e := newHarborEnv(t)
	links := []string{
		"https://sso.example/auth/login?t=_Tch-_x_",
		"http://127.0.0.1:8080/a/~b/c*d?t=a__b--c_",
	}
	for _, l := range links {
		if err := e.current().Send(context.Background(), bot.Reply{To: "#vision-gpu", Text: "Sign in with _the_ link: " + l + " — then come back here."}); err != nil {
			t.Fatal(err)
		}
	}
	e.wait()
	texts := strings.Join(mrkdwnTexts(e), "\n")
	for _, l := range links {
		if !strings.Contains(texts, " "+l+" ") {
			t.Errorf("the link %s is not in the message as it is: %q", l, texts)
		}
	}
	if strings.Contains(texts, " _the_ ") {
		t.Errorf("the prose around the link is formatted: %q", texts)
	}
}
