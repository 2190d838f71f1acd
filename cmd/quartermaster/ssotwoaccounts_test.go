package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
)

// TestLeavingATeamIsToldOnceForSomeoneOnSlackAndDiscord: someone signed in from Slack and from
// Discord has both chat accounts linked to one identity. Taken out of their team's group at the
// provider, the re-check finds the change on each account, but it is one change of one person:
// they, and the team's budget owners, are told once that they left the team, not once per chat
// account; and they can start no new lease for the team from either account.
func TestLeavingATeamIsToldOnceForSomeoneOnSlackAndDiscord(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	lead := w.globexPerson("rin", "rin@globex.example", "Robotics-Lab", "Robotics-Leads")
	w.signIn(t, lead, "rin's login")
	mika := w.globexPerson("mika", "mika@globex.example", "Robotics-Lab")
	w.signIn(t, mika, "mika's Slack login")
	onDiscord := onDiscordToo(mika, "990000000000000017")
	w.signIn(t, onDiscord, "mika's Discord login")
	mustHave(t, "mika's lease", w.say(mika, "/gpu request 1 shared-a100 for 3h"), "L-1")
	if l := w.lease(1); l.State != qm.Active || l.Team != "robotics" {
		t.Fatalf("L-1: %s for %s", l.State, l.Team)
	}

	mika.idp.SetGroups("Sales")
	w.a.SimClk.Advance(2 * time.Minute)
	w.idp.FastForward(2 * time.Minute)
	w.recheck()
	const left = "no longer in team robotics"
	if n := strings.Count(w.notices("mika@globex.example"), left); n != 1 {
		t.Errorf("mika was told %d times that they left robotics, want once:\n%s", n, w.notices("mika@globex.example"))
	}
	if n := strings.Count(w.notices("rin@globex.example"), left); n != 1 {
		t.Errorf("the budget owner was told %d times that mika left robotics, want once:\n%s", n, w.notices("rin@globex.example"))
	}
	for _, p := range []*person{mika, onDiscord} {
		mustHave(t, "a request for robotics from "+p.acct.Platform, w.say(p, "/gpu request 1 shared-a100 for 1h team robotics"), "not a member of team robotics")
	}
	if l := w.lease(1); l.State != qm.Active {
		t.Errorf("the running lease was touched: %s", l.State)
	}
}

// TestLeavingATeamFoundAtASignInIsToldOnceForSomeoneOnSlackAndDiscord: the same where the change
// is found at a sign-in: signing in again on Discord after a Slack sign-in that found the team
// left tells nothing more, nor does the next re-check of either account.
func TestLeavingATeamFoundAtASignInIsToldOnceForSomeoneOnSlackAndDiscord(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	sora := w.globexPerson("sora", "sora@globex.example", "nlp-research")
	w.signIn(t, sora, "sora's Slack login")
	onDiscord := onDiscordToo(sora, "990000000000000023")
	w.signIn(t, onDiscord, "sora's Discord login")
	mustHave(t, "sora's lease", w.say(sora, "/gpu request 1 shared-a100 for 3h"), "L-1")

	sora.idp.SetGroups("Robotics-Lab")
	w.a.SimClk.Advance(30 * time.Second)
	for _, p := range []*person{sora, onDiscord} {
		w.signIn(t, p, "sora's sign-in again from "+p.acct.Platform)
	}
	w.a.SimClk.Advance(2 * time.Minute)
	w.idp.FastForward(2 * time.Minute)
	w.recheck()
	const left = "no longer in team nlp"
	if n := strings.Count(w.notices("sora@globex.example"), left); n != 1 {
		t.Errorf("sora was told %d times that they left nlp, want once:\n%s", n, w.notices("sora@globex.example"))
	}
	if n := strings.Count(w.notices("kenji@globex.example"), left); n != 1 {
		t.Errorf("the budget owner was told %d times that sora left nlp, want once:\n%s", n, w.notices("kenji@globex.example"))
	}
}

// TestLeavingATeamFoundAtAFirstSignInFromAnotherPlatformIsToldOnce: someone signed in from
// Discord, taken out of their team's group, then signing in from Slack for the first time: the
// Slack sign-in gives the person's groups now, and the team they left is told then, once; the
// re-check of the Discord account that follows tells nothing more.
func TestLeavingATeamFoundAtAFirstSignInFromAnotherPlatformIsToldOnce(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	yuki := w.globexPerson("yuki", "yuki@globex.example", "nlp-research")
	onDiscord := onDiscordToo(yuki, "990000000000000031")
	w.signIn(t, onDiscord, "yuki's Discord login")
	mustHave(t, "yuki's lease", w.say(onDiscord, "/gpu request 1 shared-a100 for 3h"), "L-1")
	yuki.idp.SetGroups("Robotics-Lab")
	w.a.SimClk.Advance(30 * time.Second)
	w.signIn(t, yuki, "yuki's first Slack sign-in")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.a.Service.WaitNotices(ctx); err != nil {
		t.Fatal(err)
	}
	const left = "no longer in team nlp"
	if !strings.Contains(w.notices("yuki@globex.example"), left) {
		t.Errorf("the Slack sign-in that found yuki out of nlp told nothing: %q", w.notices("yuki@globex.example"))
	}
	w.a.SimClk.Advance(2 * time.Minute)
	w.idp.FastForward(2 * time.Minute)
	w.recheck()
	if n := strings.Count(w.notices("yuki@globex.example"), left); n != 1 {
		t.Errorf("yuki was told %d times that they left nlp, want once:\n%s", n, w.notices("yuki@globex.example"))
	}
	if n := strings.Count(w.notices("kenji@globex.example"), left); n != 1 {
		t.Errorf("the budget owner was told %d times that yuki left nlp, want once:\n%s", n, w.notices("kenji@globex.example"))
	}
}

// signIn has p sign in with /gpu login, following the link to the identity provider; what names
// the sign-in in the failure.
func (w *ssoWorld) signIn(t *testing.T, p *person, what string) {
	t.Helper()
	if page := w.follow(p, w.say(p, "/gpu login")); page.Status != 200 {
		t.Fatalf("%s: %d %s", what, page.Status, page.Body)
	}
}

// onDiscordToo is p's own account at the identity provider, used from Discord as the user id.
func onDiscordToo(p *person, id string) *person {
	return &person{idp: p.idp, acct: bot.Account{Platform: "discord", User: id}}
}
