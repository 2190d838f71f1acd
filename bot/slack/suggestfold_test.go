package slack_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// The form's typeahead compares what is typed with a team's or a class's name as the rest of the
// product compares names (A to Z case aside, nothing else folded): "KELP-01" offers kelp-010, but
// "KELP-01" written with the Kelvin sign (K, which strings.ToLower folds to k) offers nothing, as
// a command naming that team so is refused.
func TestFormSuggestionsFoldNamesAsCommandsDo(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	var teams []string
	var classes []slackbot.Choice
	for i := 0; i < 120; i++ {
		teams = append(teams, fmt.Sprintf("kelp-%03d", i))
		classes = append(classes, slackbot.Choice{Value: fmt.Sprintf("kite-%03d", i)})
	}
	e.useHTTPAdapter(e.bot, func(c *slackbot.Config) {
		c.Choices = slackbot.Choices{Classes: classes, Teams: teams}
	})
	e.command("UALICE", "")
	e.wait()
	suggest := func(field, typed string) string {
		t.Helper()
		code, body := e.interaction(map[string]any{"type": "block_suggestion", "user": map[string]any{"id": "UALICE"},
			"action_id": field, "block_id": field, "value": typed,
			"view": map[string]any{"id": "V1", "callback_id": "qm.request"}})
		if code != http.StatusOK {
			t.Fatalf("HTTP %d", code)
		}
		return body
	}
	for _, tc := range []struct{ field, ascii, kelvin, want string }{
		{"qm.form.team", "KELP-01", "\u212aELP-01", "kelp-010"},
		{"qm.form.class", "KITE-01", "\u212aITE-01", "kite-010"},
	} {
		if body := suggest(tc.field, tc.ascii); !strings.Contains(body, tc.want) {
			t.Errorf("typing %s does not offer %s: %s", tc.ascii, tc.want, body)
		}
		if body := suggest(tc.field, tc.kelvin); strings.Contains(body, tc.want) {
			t.Errorf("typing %q (with the Kelvin sign) offers %s, which a command naming it so does not reach: %s", tc.kelvin, tc.want, body)
		}
	}
}
