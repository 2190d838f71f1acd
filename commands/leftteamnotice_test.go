package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// Someone a re-check finds removed from a team reads the notice in the second person ("you are
// no longer in team …"); the team's budget owners read it about them, by name.
func TestTheNoticeOfLeavingATeamSpeaksToWhoLeft(t *testing.T) {
	h := newWarnHarness(t)
	const greta = "greta@kestrel.example"
	id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 6h")).Text).String()
	groups := func(who string) []string {
		t.Helper()
		ident, err := h.svc.Resolve(context.Background(), who)
		if err != nil {
			t.Fatal(err)
		}
		return ident.Groups
	}
	was := groups(udo)
	rs := h.bot.GroupsChanged(context.Background(), &qm.AccountLink{Email: udo, Groups: was}, &qm.AccountLink{Email: udo, Groups: []string{"nobody-group"}})
	var mine, owners string
	for _, r := range rs {
		if strings.HasPrefix(r.Ref, "left-team:") {
			switch r.To {
			case udo:
				mine = r.Text
			case greta:
				owners = r.Text
			}
		}
	}
	if !strings.HasPrefix(mine, "You are no longer in team ") || !strings.Contains(mine, "so you can start no new leases for it") ||
		strings.Contains(mine, udo) || !strings.Contains(mine, id) {
		t.Errorf("the notice to %s, who left: %q", udo, mine)
	}
	if !strings.HasPrefix(owners, udo+" is no longer in team ") || !strings.Contains(owners, "so they can start no new leases for it") || !strings.Contains(owners, id) {
		t.Errorf("the notice to the budget owner %s: %q", greta, owners)
	}
}

// A revoked sign-in's notice speaks to its owner too: "your sign-in was revoked … until you sign
// in again"; the budget owners read it about them.
func TestTheNoticeOfARevokedSignInSpeaksToItsOwner(t *testing.T) {
	h := newWarnHarness(t)
	const greta = "greta@kestrel.example"
	id := leaseIn(t, mustOK(t, h.say(udo, "/gpu request 1 scratch for 6h")).Text).String()
	gone, err := policy.Load([]byte(strings.Replace(warnPolicy, "  - {user: udo@kestrel.example, groups: [g-falken]}\n", "", 1)), "kestrel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h.svc.Directory = gone
	rs := h.bot.GroupsChanged(context.Background(), &qm.AccountLink{Email: udo, Groups: []string{"g-falken"}}, nil)
	var mine, owners string
	for _, r := range rs {
		if strings.HasPrefix(r.Ref, "left-team:") {
			switch r.To {
			case udo:
				mine = r.Text
			case greta:
				owners = r.Text
			}
		}
	}
	if !strings.HasPrefix(mine, "Your sign-in was revoked") || !strings.Contains(mine, "until you sign in again") ||
		strings.Contains(mine, "they sign in") || strings.Contains(mine, udo) || !strings.Contains(mine, id) {
		t.Errorf("the notice to %s, whose sign-in was revoked: %q", udo, mine)
	}
	if !strings.HasPrefix(owners, "The sign-in of "+udo+" was revoked") || !strings.Contains(owners, "until they sign in again") || !strings.Contains(owners, id) {
		t.Errorf("the notice to the budget owner %s: %q", greta, owners)
	}
}
