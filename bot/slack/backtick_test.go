package slack_test

import (
	"strings"
	"testing"
)

// A reason typed with backticks reaches the budget owner as typed, without code: its backticks
// neither open code of their own nor close or open the message's, so none of its stars,
// underscores or tildes are shown as bold, italics or strike-through, wherever they stand.
// Before, a reason of "```x``` *now* ```" made the message's text between its own backticks and
// the next ones code, and the *now* after them reached Slack as bold.
func TestBackticksInAReasonOpenNoCodeInSlack(t *testing.T) {
	for _, reason := range []string{
		"```x``` *now* ``` _please_",
		"`a *now* b` and ~not~ `c",
		"*now* `",
	} {
		e := newHarborEnv(t)
		e.command("UWIREMU", "quota request +1 bench for 1d because "+reason)
		e.wait()
		seen := false
		for _, s := range mrkdwnTexts(e) {
			if !strings.Contains(s, "now") {
				continue
			}
			seen = true
			if strings.Contains(s, "`") {
				t.Errorf("%q: a typed backtick reaches Slack, where it opens or closes code: %q", reason, s)
			}
			for _, m := range typedMarks {
				if strings.Contains(s, m) {
					t.Errorf("%q: Slack would format %s in %q", reason, m, s)
				}
			}
			if !strings.Contains(strings.ReplaceAll(readAsTyped(s), "\u02cb", "`"), reason) {
				t.Errorf("%q does not read as typed in %q", reason, s)
			}
		}
		if !seen {
			t.Fatalf("%q is shown nowhere in Slack", reason)
		}
	}
}
