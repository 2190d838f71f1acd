package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// /gpu policy names a team's one budget owner, and one fallback approver, in the singular:
// "budget owner odile@lumen.example", not "budget owners odile@lumen.example".
func TestPolicyNamesOneBudgetOwnerInTheSingular(t *testing.T) {
	h, _ := lumenReports(t)
	text := texts([]bot.Reply{mustOK(t, h.say("ops@lumen.example", "/gpu policy"))})
	for _, want := range []string{"; budget owner odile@lumen.example", "; budget owner piet@lumen.example", "fallback approver ops@lumen.example"} {
		if !strings.Contains(text, want) {
			t.Errorf("/gpu policy does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "budget owners odile@") || strings.Contains(text, "fallback approvers ops@") {
		t.Errorf("/gpu policy names one person in the plural:\n%s", text)
	}
}
