package commands

import (
	"strings"
	"testing"
)

// Without single sign-on, /gpu login, logout and unlink are refused saying why, in one sentence:
// single sign-on is not set up on this install, and who turns it on.
func TestSignInCommandsWithoutSingleSignOnSayWhy(t *testing.T) {
	for _, pc := range []struct{ policy, user string }{
		{"testdata/kolkata.yaml", "ayu@kestrel.example"},
		{ploverPolicy, "joao@plover.example"},
	} {
		h := newHarnessOn(t, pc.policy)
		for _, line := range []string{"/gpu login", "/gpu logout", "/gpu unlink " + pc.user} {
			r := h.say(pc.user, line)
			msg, _, _ := strings.Cut(r.Text, " Example: ")
			if !r.Error || !strings.Contains(msg, "single sign-on is not set up on this install") || !strings.Contains(msg, "a platform admin turns it on") ||
				strings.Count(msg, ". ") > 0 || !strings.HasSuffix(msg, ".") {
				t.Errorf("%s: %s answered %q; want one sentence saying single sign-on is not set up here and who turns it on", pc.policy, line, r.Text)
			}
			refusedWithAWorkingExample(t, h, pc.user, line, "is not offered here")
		}
	}
}
