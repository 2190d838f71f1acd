package slack_test

import (
	"strings"
	"testing"
)

// In Slack, a request naming a data class no team has, a typo of one the policy knows, is
// answered with the class likely meant and the request asked with it, as typed in Slack; a
// refusal of one says so too, with its example naming the class meant.
func TestSlackPointsOutADataClassTypo(t *testing.T) {
	e := newAndesEnv(t)
	got := e.ask("UJUAN", "request 1 lab for 1h data pubilc")
	for _, want := range []string{`No team has data class "pubilc"; did you mean public?`, "/gpu request 1 lab for 1h data public"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("the reply %q does not say %q", got.Text, want)
		}
	}
	got = e.ask("UJUAN", "request 1 labb for 1h data pubilc")
	if !strings.Contains(got.Text, "did you mean public?") || !strings.Contains(got.Text, "Example: `/gpu request 1 lab for 1h data public`") {
		t.Errorf("the refusal %q; want it to ask did you mean public?, with the request of data public as its example", got.Text)
	}
}
