package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
)

// unlinkedSSO is single sign-on where no chat account has signed in yet.
type unlinkedSSO struct{ helpOnlySSO }

func (unlinkedSSO) Link(context.Context, qm.Account) (*qm.AccountLink, bool, error) {
	return nil, false, nil
}

// A request form offers its person the teams a request may charge (their own, the first the
// default) and the policy's data classes, their teams' first, as a command knows them: by the
// chat's email without single sign-on, by the email their sign-in proved with it (whatever the
// chat shows), and nothing to someone not signed in or whom the directory does not know.
func TestFormChoicesFollowThePerson(t *testing.T) {
	h := newHarnessOn(t, "testdata/fjord.yaml")
	ctx := context.Background()
	slackAcct := bot.Account{Platform: "slack", Workspace: "T1", User: "U9"}
	choices := func(user string) string {
		teams, mine := h.bot.FormTeams(ctx, bot.Request{User: user, Account: slackAcct})
		classes, own := h.bot.FormDataClasses(ctx, bot.Request{User: user, Account: slackAcct})
		return strings.Join(teams, " ") + " (" + string(rune('0'+mine)) + ") / " + strings.Join(classes, " ") + " (" + string(rune('0'+own)) + ")"
	}
	for _, c := range []struct{ user, want string }{
		{"kari@fjord.example", "ml-infra2 (1) / open restricted (2)"},
		{"SIGRID@fjord.example", "computational-linguistics-research (1) / open restricted (1)"},
		// A group the policy lists no team for is a team of the default quota, cleared for public data.
		{"stray@fjord.example", "nothing (1) / public open restricted (1)"},
		{"nobody@elsewhere.example", " (0) /  (0)"},
	} {
		if got := choices(c.user); got != c.want {
			t.Errorf("%s's request form offers %q; want %q", c.user, got, c.want)
		}
	}
	// Single sign-on: the linked email's teams, not the chat's; none before signing in.
	h.bot.SSO = linkedSSO{email: "sigrid@fjord.example"}
	if got, want := choices("kari@fjord.example"), "computational-linguistics-research (1) / open restricted (1)"; got != want {
		t.Errorf("signed in as sigrid, the form offers %q; want %q", got, want)
	}
	h.bot.SSO = unlinkedSSO{}
	if got, want := choices("kari@fjord.example"), " (0) /  (0)"; got != want {
		t.Errorf("not signed in, the form offers %q; want %q", got, want)
	}
}
