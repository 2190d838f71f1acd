package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAProviderThatGivesNoGroupsOnRecheckTakesNoRightsAway: a provider that answers a refresh
// without an ID token and keeps groups out of userinfo says nothing about anyone's groups at the
// re-check. An approver by group can still approve, the requester is still in their team, and
// nobody is told that anyone left a team. Once those groups have gone unconfirmed for two re-check
// periods, the approver's click gets a login link that says why, and carries the decision.
func TestAProviderThatGivesNoGroupsOnRecheckTakesNoRightsAway(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	sora := w.globexPerson("sora", "sora@globex.example", "robotics-lab")
	riku := w.globexPerson("riku", "riku@globex.example", "robotics-lab", "ROBOTICS-LEADS")
	for _, p := range []*person{sora, riku} {
		if pg := w.follow(p, w.say(p, "/gpu login")); pg.Status != http.StatusOK {
			t.Fatalf("%s's login: %d %s", p.idp.Email, pg.Status, pg.Body)
		}
	}
	mustHave(t, "exception", w.say(sora, "/gpu request 2 h200 for 60h"), "L-1 waits for approval")
	mustHave(t, "exception", w.say(sora, "/gpu request 2 h200 for 50h"), "L-2 waits for approval")

	w.idp.WithoutIDTokensOnRefresh()
	w.idp.SetUserinfo(func(c map[string]any) { delete(c, "groups") })
	w.a.SimClk.Advance(70 * time.Second)
	if rep := w.recheck(); rep.Changed != 0 || rep.Revoked != 0 {
		t.Fatalf("re-check: %+v", rep)
	}
	mustHave(t, "approval after a re-check without groups", w.say(riku, "/gpu approve L-1"), "Approved L-1")
	mustHave(t, "request after a re-check without groups", w.say(sora, "/gpu request 1 shared-a100 for 1h"), "is active")
	if l := w.lease(3); l.Team != "robotics" {
		t.Fatalf("sora's lease is charged to %q", l.Team)
	}
	for _, who := range []string{"sora@globex.example", "riku@globex.example"} {
		if n := w.notices(who); strings.Contains(n, "no longer in team") {
			t.Fatalf("%s was told someone left a team: %q", who, n)
		}
	}

	// Still no groups from the provider, two periods on: riku signs in again to decide.
	w.a.SimClk.Advance(70 * time.Second)
	w.recheck()
	answer := w.say(riku, "/gpu approve L-2")
	mustHave(t, "approval with groups unconfirmed", answer, "gave no groups", "nothing was decided yet", "/auth/login?t=", "L-2 is approved as soon as you have")
	if page := w.follow(riku, answer); page.Status != http.StatusOK || !strings.Contains(page.Body, "Approved L-2") {
		t.Fatalf("the login page: %d %s", page.Status, page.Body)
	}
}
