package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/qm"
)

// TestARemovalFoundOnOneChatAccountHoldsOnTheOther: someone signed in from Slack and, a little
// later, from Discord is taken out of their team's group at the provider. The next re-check of
// the Slack sign-in finds it; from then on they can start no lease for the team from either
// account, though the Discord sign-in (newer, not yet due) has not been re-checked, and, taken
// out of the approvers' group too, they are no longer counted among its members.
func TestARemovalFoundOnOneChatAccountHoldsOnTheOther(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	sora := w.globexPerson("sora", "Sora@Globex.example", "Robotics-Lab", "Robotics-Leads")
	soraDiscord := &person{idp: sora.idp, acct: bot.Account{Platform: "discord", User: "880000000000000001"}}
	if pg := w.follow(sora, w.say(sora, "/gpu login")); pg.Status != http.StatusOK {
		t.Fatalf("sora's Slack login: %d %s", pg.Status, pg.Body)
	}
	w.a.SimClk.Advance(40 * time.Second)
	if pg := w.follow(soraDiscord, w.sayAs(soraDiscord, "discord:880000000000000001", "/gpu login")); pg.Status != http.StatusOK {
		t.Fatalf("sora's Discord login: %d %s", pg.Status, pg.Body)
	}
	mustHave(t, "before the removal", w.say(sora, "/gpu request 1 shared-a100 for 1h team robotics"), "L-1 is active")

	sora.idp.SetGroups("globex-staff")
	w.a.SimClk.Advance(30 * time.Second) // the Slack sign-in is due, the Discord one is not
	if rep := w.recheck(); rep.Checked != 1 || rep.Changed != 1 {
		t.Fatalf("re-check after the removal: %+v", rep)
	}
	if m := w.sso.Members("robotics-leads"); len(m) != 0 {
		t.Fatalf("Robotics-Leads after the removal: %v", m)
	}
	mustHave(t, "told", w.notices("sora@globex.example"), "no longer in team robotics", "can start no new leases for it")
	mustHave(t, "Slack request after the removal", w.say(sora, "/gpu request 1 shared-a100 for 1h team robotics"), "not a member of team robotics")
	mustHave(t, "Discord request after the removal", w.sayAs(soraDiscord, "discord:880000000000000001", "/gpu request 1 shared-a100 for 1h team robotics"), "not a member of team robotics")
}

// sayAs is the person typing a command on a chat account whose platform names them as user (a
// Discord account is "discord:ID"; no email shows).
func (w *ssoWorld) sayAs(p *person, user, text string) string {
	w.t.Helper()
	rs := w.a.Bot.Handle(context.Background(), bot.Request{User: user, Account: p.acct, Text: text})
	if len(rs) == 0 {
		w.t.Fatalf("%s: no answer", text)
	}
	return rs[0].PlainText()
}

// TestAnUnlinkedApproverHearsOfNoMoreExceptions: an approver named by group who signs out, or
// whom a platform admin unlinks, is no longer told of the group's exceptions: the service no
// longer knows them as a member until they sign in again.
func TestAnUnlinkedApproverHearsOfNoMoreExceptions(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	sora := w.globexPerson("sora", "sora@globex.example", "robotics-lab")
	riku := w.globexPerson("riku", "Riku@Globex.example", "robotics-lab", "robotics-leads")
	mei := w.globexPerson("mei", "mei@globex.example", "robotics-lab", "Robotics-Leads")
	admin := w.globexPerson("hana", "hana@globex.example", "gpu-admins")
	for _, p := range []*person{sora, riku, mei, admin} {
		if pg := w.follow(p, w.say(p, "/gpu login")); pg.Status != http.StatusOK {
			t.Fatalf("%s's login: %d %s", p.idp.Email, pg.Status, pg.Body)
		}
	}
	mustHave(t, "first exception", w.say(sora, "/gpu request 2 h200 for 60h"), "L-1 waits for approval")
	mustHave(t, "riku told", w.notices("riku@globex.example"), "L-1")
	mustHave(t, "mei told", w.notices("mei@globex.example"), "L-1")

	mustHave(t, "unlink", w.say(admin, "/gpu unlink riku@globex.example"), "Unlinked 1")
	mustHave(t, "logout", w.say(mei, "/gpu logout"), "no longer linked")
	mustHave(t, "second exception", w.say(sora, "/gpu request 2 h200 for 50h"), "L-2 waits for approval")
	for _, who := range []string{"riku@globex.example", "mei@globex.example"} {
		if got := w.notices(who); strings.Contains(got, "L-2") {
			t.Errorf("%s, no longer signed in, was told of L-2: %q", who, got)
		}
	}
}

// TestBudgetOwnersNamedByGroupHearWhoLeftTheTeam: where a team's budget owners are a group,
// its signed-in members are told that someone left the team at the provider and which of their
// leases run on, as budget owners named by email are.
func TestBudgetOwnersNamedByGroupHearWhoLeftTheTeam(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	sora := w.globexPerson("sora", "sora@globex.example", "robotics-lab")
	riku := w.globexPerson("riku", "Riku@Globex.example", "robotics-lab", "ROBOTICS-LEADS")
	for _, p := range []*person{sora, riku} {
		if pg := w.follow(p, w.say(p, "/gpu login")); pg.Status != http.StatusOK {
			t.Fatalf("%s's login: %d %s", p.idp.Email, pg.Status, pg.Body)
		}
	}
	mustHave(t, "request", w.say(sora, "/gpu request 1 shared-a100 for 4h"), "L-1 is active")
	sora.idp.SetGroups("globex-staff")
	w.a.SimClk.Advance(2 * time.Minute)
	if rep := w.recheck(); rep.Changed != 1 {
		t.Fatalf("re-check after the removal: %+v", rep)
	}
	mustHave(t, "the budget owner by group", w.notices("riku@globex.example"), "sora@globex.example is no longer in team robotics", "L-1 (active")
}

// TestARevokedSignInIsNotCalledLeavingTheTeam: a sign-in the provider no longer honours (an
// idle session that ended, a revoked refresh token) says nothing about the person's groups.
// Signed in on no other chat account, they and the budget owners hear that the sign-in was
// revoked and that no new leases start until they sign in again, not that they left the team;
// still signed in on another chat account, they keep their team and the owners hear nothing.
func TestARevokedSignInIsNotCalledLeavingTheTeam(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	yuki := w.globexPerson("yuki", "yuki@globex.example", "nlp-research")
	kenji := w.globexPerson("kenji", "kenji@globex.example", "nlp-research")
	kenjiDiscord := &person{idp: kenji.idp, acct: bot.Account{Platform: "discord", User: "880000000000000003"}}
	for _, p := range []*person{yuki, kenji} {
		if pg := w.follow(p, w.say(p, "/gpu login")); pg.Status != http.StatusOK {
			t.Fatalf("%s's login: %d %s", p.idp.Email, pg.Status, pg.Body)
		}
	}
	mustHave(t, "request", w.say(yuki, "/gpu request 1 shared-a100 for 4h"), "L-1 is active")
	w.a.SimClk.Advance(40 * time.Second)
	if pg := w.follow(kenjiDiscord, w.sayAs(kenjiDiscord, "discord:880000000000000003", "/gpu login")); pg.Status != http.StatusOK {
		t.Fatalf("kenji's Discord login: %d %s", pg.Status, pg.Body)
	}
	// The provider refuses both Slack sign-ins (due); Kenji's Discord one is not due yet.
	for range 2 {
		w.idp.QueueError(&mockoidc.ServerError{Code: http.StatusBadRequest, Error: "invalid_grant", Description: "Session not active"})
	}
	w.a.SimClk.Advance(30 * time.Second)
	if rep := w.recheck(); rep.Revoked != 2 {
		t.Fatalf("re-check: %+v", rep)
	}
	told := w.notices("kenji@globex.example")
	mustHave(t, "the budget owner", told, "The sign-in of yuki@globex.example was revoked", "until they sign in again", "L-1 (active")
	for _, wrong := range []string{"yuki@globex.example is no longer in team", "kenji@globex.example is no longer in team", "The sign-in of kenji@globex.example"} {
		if strings.Contains(told, wrong) {
			t.Errorf("kenji was told %q: %q", wrong, told)
		}
	}
	mustHave(t, "kenji on Discord", w.sayAs(kenjiDiscord, "discord:880000000000000003", "/gpu request 1 shared-a100 for 1h team nlp"), "is active")
}

// TestAnEmailWithALookAlikeLetterIsNotSomeoneElses: an email the provider gives with a letter
// that only looks like another (a Kelvin sign for a K) is its own; signing in with it does not
// make someone the person whose email it resembles, so they cannot decide that person's
// approvals.
func TestAnEmailWithALookAlikeLetterIsNotSomeoneElses(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	yuki := w.globexPerson("yuki", "yuki@globex.example", "nlp-research")
	mallory := &person{idp: oidctest.NewUser("sub-mallory", "\u212Aenji@globex.example"), acct: bot.Account{Platform: "discord", User: "880000000000000009"}}
	if pg := w.follow(yuki, w.say(yuki, "/gpu login")); pg.Status != http.StatusOK {
		t.Fatalf("yuki's login: %d %s", pg.Status, pg.Body)
	}
	mustHave(t, "exception", w.say(yuki, "/gpu request 2 h200 for 60h"), "L-1 waits for approval")
	w.follow(mallory, w.sayAs(mallory, "discord:880000000000000009", "/gpu login"))
	w.sayAs(mallory, "discord:880000000000000009", "/gpu approve L-1")
	if l := w.lease(1); l.State != qm.PendingApproval {
		t.Fatalf("L-1 was decided by a look-alike of kenji@globex.example: %s by %q", l.State, l.DecidedBy)
	}
}

// TestARecheckTellsWhoDecidesAfterIt: when one re-check finds both that someone left a team and
// that one of its budget owners (named by group) left the owners' group, the notice that they
// left goes to who may decide the team's exceptions after the re-check: the owner still in the
// group, not the one who left it.
func TestARecheckTellsWhoDecidesAfterIt(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	sora := w.globexPerson("sora", "sora@globex.example", "robotics-lab")
	riku := w.globexPerson("riku", "riku@globex.example", "robotics-lab", "robotics-leads")
	mei := w.globexPerson("mei", "mei@globex.example", "robotics-lab", "robotics-leads")
	for _, p := range []*person{sora, riku, mei} {
		if pg := w.follow(p, w.say(p, "/gpu login")); pg.Status != http.StatusOK {
			t.Fatalf("%s's login: %d %s", p.idp.Email, pg.Status, pg.Body)
		}
	}
	mustHave(t, "request", w.say(sora, "/gpu request 1 shared-a100 for 4h"), "L-1 is active")
	sora.idp.SetGroups("globex-staff")
	riku.idp.SetGroups("robotics-lab")
	w.a.SimClk.Advance(2 * time.Minute)
	if rep := w.recheck(); rep.Changed != 2 {
		t.Fatalf("re-check after the removals: %+v", rep)
	}
	mustHave(t, "the budget owner still in the group", w.notices("mei@globex.example"), "sora@globex.example is no longer in team robotics", "L-1 (active")
	if got := w.notices("riku@globex.example"); strings.Contains(got, "sora@globex.example is no longer in team robotics") {
		t.Errorf("riku, no longer a budget owner after the re-check, was told that sora left: %q", got)
	}
}
