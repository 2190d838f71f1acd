package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/acme/quartermaster/internal/qm"
)

// TestAFailedRefreshAsksTheApproverToSignIn: a re-check whose refresh fails does what
// docs/sso.md says. The provider down: the groups are kept while current, so the approver can
// still decide; after two periods their click gets a login link saying their groups could not
// be confirmed. The refresh token revoked: the account is unlinked, its owner is told that
// /gpu login signs them in again, and their click gets a login link that carries the decision.
func TestAFailedRefreshAsksTheApproverToSignIn(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	sora := w.globexPerson("sora", "sora@globex.example", "robotics-lab")
	riku := w.globexPerson("riku", "riku@globex.example", "robotics-lab", "ROBOTICS-LEADS")
	for _, p := range []*person{sora, riku} {
		if pg := w.follow(p, w.say(p, "/gpu login")); pg.Status != http.StatusOK {
			t.Fatalf("%s's login: %d %s", p.idp.Email, pg.Status, pg.Body)
		}
	}
	for i := 1; i <= 3; i++ { // each its own length: the same request asked again while it waits is not asked again
		mustHave(t, "exception", w.say(sora, fmt.Sprintf("/gpu request 2 h200 for %dh", 59+i)), "waits for approval")
	}

	// The provider is down for two re-checks (each refreshes sora's and riku's sign-ins).
	for range 2 {
		for range 2 {
			w.idp.QueueError(&mockoidc.ServerError{Code: http.StatusServiceUnavailable, Error: "temporarily_unavailable", Description: "down"})
		}
		w.a.SimClk.Advance(70 * time.Second)
		if rep := w.recheck(); rep.Revoked != 0 || rep.Changed != 0 {
			t.Fatalf("re-check with the provider down: %+v", rep)
		}
		if w.lease(1).State == qm.PendingApproval {
			mustHave(t, "approval while the groups are current", w.say(riku, "/gpu approve L-1"), "Approved L-1")
		}
	}
	answer := w.say(riku, "/gpu approve L-2")
	mustHave(t, "approval with the provider down", answer, "could not be confirmed", "nothing was decided yet", "/auth/login?t=", "L-2 is approved as soon as you have")
	if strings.Contains(answer, "gave no groups") {
		t.Fatalf("a provider that was down is said to have given no groups: %q", answer)
	}
	if page := w.follow(riku, answer); page.Status != http.StatusOK || !strings.Contains(page.Body, "Approved L-2") {
		t.Fatalf("the login page: %d %s", page.Status, page.Body)
	}

	// The provider refuses both refresh tokens (the sessions were revoked): unlinked, told, and
	// riku is asked to sign in to decide.
	for range 2 {
		w.idp.QueueError(&mockoidc.ServerError{Code: http.StatusBadRequest, Error: "invalid_grant", Description: "Token is not active"})
	}
	w.a.SimClk.Advance(70 * time.Second)
	if rep := w.recheck(); rep.Revoked != 2 {
		t.Fatalf("re-check with riku's sign-in revoked: %+v", rep)
	}
	mustHave(t, "told of the revocation", w.notices("riku@globex.example"), "revoked at the identity provider", "/gpu login signs you in again")
	answer = w.say(riku, "/gpu approve L-3")
	mustHave(t, "approval after the revocation", answer, "nothing was decided yet", "/auth/login?t=", "L-3 is approved as soon as you have")
	if l := w.lease(3); l.State != qm.PendingApproval {
		t.Fatalf("L-3 was decided without a sign-in: %s", l.State)
	}
}

// TestKeycloakFullGroupPaths: Keycloak's group mapper with "Full group path" on sends groups as
// paths (/Robotics-Lab). A policy that names the paths in idp_groups, as docs/sso.md says, places
// people in their team, and a re-check keeps them there.
func TestKeycloakFullGroupPaths(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, strings.Replace(globexPolicy, "idp_groups: [Robotics-Lab]", "idp_groups: [/Robotics-Lab]", 1))
	sora := w.globexPerson("sora", "sora@globex.example", "/robotics-lab")
	if pg := w.follow(sora, w.say(sora, "/gpu login")); pg.Status != http.StatusOK || !strings.Contains(pg.Body, "/robotics-lab") {
		t.Fatalf("sora's login: %d %s", pg.Status, pg.Body)
	}
	mustHave(t, "request", w.say(sora, "/gpu request 1 shared-a100 for 1h"), "L-1 is active")
	w.a.SimClk.Advance(70 * time.Second)
	if rep := w.recheck(); rep.Checked != 1 || rep.Changed != 0 {
		t.Fatalf("re-check: %+v", rep)
	}
	mustHave(t, "request after the re-check", w.say(sora, "/gpu request 1 shared-a100 for 1h team robotics"), "L-2 is active")
	if l := w.lease(1); l.Team != "robotics" {
		t.Fatalf("L-1 is charged to %q", l.Team)
	}
}
